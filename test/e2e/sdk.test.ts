// The published Vilvik SDK (container/sdk-tests: vilvik==0.5.7 from PyPI, in its own environment made
// by `npm test` on first use) against the real service: its pytest suite runs here, on this suite's service, with
// a fresh account. scripts/test.mjs counts the suite's own tests (its JUnit report) in the summary line.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
// @ts-expect-error -- a plain ESM script, without types
import { ROOT, SDK_PYTHON } from "../../scripts/lib.mjs";
import { baseUrl, call, newAccount } from "./client";

describe("the Vilvik SDK, unmodified", () => {
  it("passes its suite against Allele", { timeout: 300_000 }, async () => {
    expect(existsSync(SDK_PYTHON), "container/sdk-tests/.venv is missing: `npm test` makes it on first use").toBe(true);
    const account = await newAccount();
    // The suite keeps several submissions live at once: the account's concurrency is raised for it.
    await call(`/admin/v1/accounts/${account.id}`, {
      method: "PATCH",
      token: inject("adminToken"),
      body: { overrides: { concurrent_submissions: 100, inflight_api_runs: 100 } },
    });
    // One run a day: its second create is the SDK's RateLimitError, with the Retry-After of the next unit.
    const limited = await newAccount();
    await call(`/admin/v1/accounts/${limited.id}`, {
      method: "PATCH",
      token: inject("adminToken"),
      body: { overrides: { daily_quota: 1 } },
    });
    const reports = join(ROOT, ".wrangler", "test-reports");
    mkdirSync(reports, { recursive: true });
    const suite = spawnSync(
      SDK_PYTHON,
      ["-m", "pytest", "-q", "-p", "no:cacheprovider", `--junitxml=${join(reports, "sdk.xml")}`, join(ROOT, "container", "sdk-tests")],
      {
        cwd: join(ROOT, "container", "sdk-tests"),
        encoding: "utf8",
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          ALLELE_BASE_URL: `${baseUrl()}/api/v1`,
          ALLELE_API_KEY: account.key,
          ALLELE_LIMITED_API_KEY: limited.key,
        },
      },
    );
    expect(suite.status, `${suite.stdout}\n${suite.stderr}`).toBe(0);
  });
});
