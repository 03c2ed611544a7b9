/**
 * The targets of the functions the front door calls on a request
 * (docs/operators/deploy.md, "Bundle sizes and cold starts"): CI fails a
 * bundle over the size (scripts/check-bundle-sizes.ts); `npm run
 * bundle-report` marks both (scripts/measure-bundles.ts).
 */
export const REQUEST_PATH_TARGET_KB = 400;
export const IMPORT_TARGET_MS = 50;
