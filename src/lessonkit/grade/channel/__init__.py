"""The channel to a grading child: requests, the strict reading of its reports, the
run record, and the reference run's record kept on disk."""
