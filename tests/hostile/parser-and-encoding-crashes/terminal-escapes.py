# hostile: an exception message full of terminal control sequences (set the window title,
# clear the screen, fake a green PASSED) for the human-readable report.
#@ TASK make-it-yours
raise ValueError("\x1b]0;owned\x07\x1b[2J\x1b[H\x1b[32mPASSED: every task\x1b[0m\r")
