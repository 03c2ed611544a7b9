/**
 * The release of this checkout: package.json's version (CHANGELOG.md says
 * what each release stores). Read where package.json is at hand, by the
 * stack at synth and by the local runtime; the functions know it from
 * PLACEMENT_RELEASE (config.release), which those two set.
 */
import packageJson from '../package.json' with { type: 'json' };

export const CHECKOUT_RELEASE: string = packageJson.version;
