import { COMMANDS } from "./commands.ts";
import { renderTopHelp } from "./help.ts";

/** The text `chronicle --help` prints, made from the command and options tables. */
export const USAGE: string = renderTopHelp(COMMANDS);
