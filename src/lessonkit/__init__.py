"""lessonkit: the state-02 pytree lesson as tested software."""

__version__ = "0.1.0"
