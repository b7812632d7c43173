# hostile: starts 2000 sleeping threads (each a kernel task) and leaves them running.
#@ TASK make-it-yours
import threading as _threading, time as _time
for _ in range(2000):
    try:
        _threading.Thread(target=_time.sleep, args=(3600,), daemon=True).start()
    except RuntimeError:
        break
norm_squared = manual = jnp.array(0.)
