"""Execution receipts: what ran, where, and what it printed, and the records kept of them.

`run_script` runs one of a lesson's scripts (`lessonkit.lesson.files`) in a child process
and returns a `Receipt` (`schema`); `store` keeps each script's committed reference and
refuses a stale one; `compare_output` sets a fresh run's lines beside the record's
(`comparison`). This package's names are its public surface; the modules are its parts.
"""

from lessonkit.receipts.comparison import LineDifference, OutputComparison, compare_output
from lessonkit.receipts.running import (
    DEFAULT_TIMEOUT_S,
    BackendUnavailableError,
    check_options,
    run_script,
    with_device_count,
)
from lessonkit.receipts.schema import (
    SCHEMA,
    CorruptRecordError,
    MissingRecordError,
    Receipt,
    RecordError,
    StaleRecordError,
    code_sha256,
)
from lessonkit.receipts.store import (
    PLATFORMS,
    AcceleratorRecord,
    load_accelerator_records,
    load_record,
    load_records,
    read_receipt,
    record_command,
    record_fix,
    record_path,
    run_command,
    save_record,
    save_run,
    script_path,
    verified_hardware,
    write_new,
)

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "PLATFORMS",
    "SCHEMA",
    "AcceleratorRecord",
    "BackendUnavailableError",
    "CorruptRecordError",
    "LineDifference",
    "MissingRecordError",
    "OutputComparison",
    "Receipt",
    "RecordError",
    "StaleRecordError",
    "check_options",
    "code_sha256",
    "compare_output",
    "load_accelerator_records",
    "load_record",
    "load_records",
    "read_receipt",
    "record_command",
    "record_fix",
    "record_path",
    "run_command",
    "run_script",
    "save_record",
    "save_run",
    "script_path",
    "verified_hardware",
    "with_device_count",
    "write_new",
]
