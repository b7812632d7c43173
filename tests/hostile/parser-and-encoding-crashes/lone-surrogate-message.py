# hostile: a task raises an exception whose message holds a lone surrogate (not encodable
# as UTF-8); every output of the grader must survive it.
#@ TASK make-it-yours
raise ValueError("bad \udcff value")
