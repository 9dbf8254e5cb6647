// The backend package's session starts (web/gcs): 1,000 page requests at once against
// fake-gcs-server, a Go program of its own (web/bench/sessions/main.go says what it measures).
// No browser: it runs with BENCH_ONLY=sessions, or as `go run ./web/bench/sessions`.
import { spawnSync } from "node:child_process";
import { REPO_ROOT } from "../test/harness.mjs";

export function benchSessions() {
  const args = ["run", "./web/bench/sessions"];
  if (process.env.BENCH_SESSIONS_N) args.push("-n", process.env.BENCH_SESSIONS_N);
  if (process.env.BENCH_SESSIONS_ROUNDS) args.push("-rounds", process.env.BENCH_SESSIONS_ROUNDS);
  const r = spawnSync("go", args, { cwd: REPO_ROOT, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`go ${args.join(" ")} failed (${r.status ?? r.signal})`);
}
