/** The provider a request names, or upstream's 404 for it. */
import type { Provider } from '../domain/model.js';
import { getProvider } from '../storage/providers.js';
import { notFound, objectNotFound } from '../api/errors.js';

/**
 * Most handlers let upstream's object-layer NotFound escape (answered
 * without Vary); those that catch it themselves repeat the sentence after
 * their own, joined by `repeatWith` (": " or " : ", as upstream writes it).
 */
export async function loadProvider(uuid: string, repeatWith?: ': ' | ' : '): Promise<Provider> {
  const provider = await getProvider(uuid);
  if (provider === undefined) {
    const sentence = `No resource provider with uuid ${uuid} found`;
    throw repeatWith === undefined ? objectNotFound(sentence) : notFound(`${sentence}${repeatWith}${sentence}`);
  }
  return provider;
}
