/** vitest's global setup: builds placement-admin once (npm run build:admin), so that its tests run what operators run. */
import { execFileSync } from 'node:child_process';

export default function buildAdmin(): void {
  execFileSync('npm', ['run', '--silent', 'build:admin'], { stdio: 'inherit' });
}
