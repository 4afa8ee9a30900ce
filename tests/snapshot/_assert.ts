/**
 * Assertions for the snapshot tests: the shared ones in `tests/_helpers/assert.ts`.
 *
 * @module
 */
export { assert, assertEquals, assertRejects, assertThrows } from "../_helpers/assert.ts";
