/**
 * Process-wide logging, as text or JSON lines on stderr.
 *
 * @module
 */
export {
  configureLogging,
  log,
  type LogFields,
  type LoggingOptions,
  type LogLevel,
} from "./logger.ts";
export { errorMessage } from "./error_message.ts";
export { bytesForPeople, formatBytes } from "./format_bytes.ts";
