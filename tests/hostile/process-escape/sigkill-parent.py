# hostile: SIGKILLs the grading command (the worker's parent) from a task cell.
#@ TASK make-it-yours
import os as _os, signal as _signal
_os.kill(_os.getppid(), _signal.SIGKILL)
norm_squared = manual = jnp.array(0.)
