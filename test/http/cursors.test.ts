// Cursors are signed and bound to the account: forged, altered or borrowed ones are 400.
import { describe, expect, it } from "vitest";
import { call, createSubmission, expectError, json, newAccount } from "../helpers/api";

const cursorOf = (link: string) => decodeURIComponent(/cursor=([^&]+)/.exec(link)![1]!);

describe("signed cursors", () => {
  it("accepts its own cursor and refuses a forged, altered or another account's one", async () => {
    const a = await newAccount();
    const b = await newAccount();
    for (let i = 0; i < 3; i++) await createSubmission(a.key);
    const first = await json(await call("/api/v1/submissions/?page_size=1", { key: a.key }));
    const cursor = cursorOf(first.next);
    expect((await call(`/api/v1/submissions/?page_size=1&cursor=${encodeURIComponent(cursor)}`, { key: a.key })).status).toBe(200);

    const [payload, sig] = [cursor.slice(0, cursor.lastIndexOf(".")), cursor.slice(cursor.lastIndexOf(".") + 1)];
    const data = JSON.parse(atob(payload.replaceAll("-", "+").replaceAll("_", "/")));
    const forgedPayload = btoa(JSON.stringify({ ...data, i: "000000000000" }))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replaceAll("=", "");
    const bad = [
      payload, // unsigned
      `${forgedPayload}.${sig}`, // altered position, old signature
      `${payload}.${"0".repeat(sig.length)}`, // made-up signature
    ];
    for (const c of bad) {
      const err = await expectError(
        await call(`/api/v1/submissions/?page_size=1&cursor=${encodeURIComponent(c)}`, { key: a.key }),
        400,
        "validation_failed",
      );
      expect(err.details.fields[0].field).toBe("cursor");
    }
    // Another account cannot use it.
    await expectError(
      await call(`/api/v1/submissions/?page_size=1&cursor=${encodeURIComponent(cursor)}`, { key: b.key }),
      400,
      "validation_failed",
    );
  });
});
