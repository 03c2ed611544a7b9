/**
 * Stands in for @aws-sdk/credential-provider-node in the Lambda bundles
 * (an esbuild alias, infra/bundling.ts). Lambda always hands the function
 * its role's credentials in environment variables, the first thing the
 * SDK's default chain tries; the rest of the chain (SSO, STS web identity,
 * profiles, IMDS...) never runs there but is a third of every bundle.
 */
interface EnvironmentCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export const defaultProvider = () => async (): Promise<EnvironmentCredentials> => {
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = process.env;
  if (!accessKeyId || !secretAccessKey) throw new Error('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set: this bundle only runs in Lambda');
  return { accessKeyId, secretAccessKey, sessionToken };
};
