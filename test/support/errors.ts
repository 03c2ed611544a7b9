/** The HttpError an action throws; fails the test when it throws nothing or something else. */
import { HttpError } from '../../shared/api/errors.js';

export function errorOf(action: () => unknown): HttpError {
  try {
    action();
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
  throw new Error('expected an HttpError');
}
