/** The standard resource classes (os-resource-classes 1.1.0) and traits (os-traits 3.9.0). */
import standardClasses from '../../config/os-resource-classes-1.1.0.json' with { type: 'json' };
import standardTraits from '../../config/os-traits-3.9.0.json' with { type: 'json' };

export const STANDARD_RESOURCE_CLASSES: readonly string[] = standardClasses.resource_classes;
export const STANDARD_TRAITS: readonly string[] = standardTraits.traits;

const standardClassSet = new Set(STANDARD_RESOURCE_CLASSES);
export const isStandardResourceClass = (name: string): boolean => standardClassSet.has(name);

/** The standard trait of a provider that shares its inventory with the trees in its aggregates. */
export const SHARING_TRAIT = 'MISC_SHARES_VIA_AGGREGATE';
