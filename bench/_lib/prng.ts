/**
 * The seeded generator the benchmarks share with the tests.
 *
 * @module
 */
export { Prng } from "../../tests/_helpers/prng.ts";
