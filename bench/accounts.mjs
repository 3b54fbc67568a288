// A bench account: premium, plenty of credits, and its slot, in-flight and quota limits raised through
// the admin API, so the benchmarks measure the service and not the account's limits.
export async function benchAccount(baseUrl, adminToken) {
  const admin = { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" };
  const res = await fetch(`${baseUrl}/admin/v1/accounts`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ email: `bench-${crypto.randomUUID()}@example.com`, plan: "premium", credits: 100000 }),
  });
  const { account, key } = await res.json();
  await fetch(`${baseUrl}/admin/v1/accounts/${account.id}`, {
    method: "PATCH",
    headers: admin,
    body: JSON.stringify({ overrides: { concurrent_submissions: 1000000, inflight_api_runs: 1000000, daily_quota: 1000000 } }),
  });
  return key;
}
