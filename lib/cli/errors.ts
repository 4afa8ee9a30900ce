/** A command that failed: main prints `error: <message>` on one line and exits 1. */
export class CliError extends Error {
  /** Makes the error; `message` is the one line printed after `error: `. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CliError";
  }
}

/** A command called the wrong way: main prints the message and exits 2. */
export class UsageError extends Error {
  /** Makes the error; `message` says what is wrong and how to call the command. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}
