/** Kept until tests/ imports ./testing/pg_test_schema.ts (test support lives in src/store/testing/). */
export * from "./testing/pg_test_schema.ts";
