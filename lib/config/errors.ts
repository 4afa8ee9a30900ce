/**
 * A configuration that cannot be used: an unknown option, a bad value (named with where it
 * came from), an unreadable config file. The command line reports it as bad usage (exit 2).
 */
export class ConfigError extends Error {
  /**
   * Makes the error.
   *
   * @param message What is wrong, in sentence case, values quoted.
   * @param options The cause, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConfigError";
  }
}
