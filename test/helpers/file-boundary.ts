// A setup file of the workerd projects. In a project whose files share one Worker (isolate: false in
// vitest.config.ts), a file leaves nothing of its own behind for the next: its spies (on fetch, on the
// queues) are restored and its fake timers and stubbed globals undone when it ends.
import { afterAll, vi } from "vitest";

afterAll(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});
