import { defineConfig } from "drizzle-kit";

// SQL migrations are generated from src/storage/schema.ts into migrations/ (flat layout, as
// `wrangler d1 migrations apply` and the test pool's readD1Migrations read them).
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/storage/schema.ts",
  out: "./migrations",
});
