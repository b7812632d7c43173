"""One module per `lessonkit` subcommand: `configure(parser)` and `run(args) -> int`."""
