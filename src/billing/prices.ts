// What a run costs (docs/api.md#limits): cpu_seconds × CPU_PRICE + peak_memory_GB × wall_seconds × MEMORY_PRICE,
// in integer micro-units of currency, rounded up.
import { config } from "../config";
import type { AccountRow } from "../storage/accounts";

export interface Usage {
  cpuSeconds: number;
  peakMemoryMb: number;
  wallMs: number;
}

export const MICRO = 1_000_000;

export const prices = (env: object) => config(env).prices;

export function chargeMicro(usage: Usage, price: { cpu: number; memory: number }): { amountMicro: number; gbSeconds: number } {
  const gbSeconds = (usage.peakMemoryMb / 1024) * (usage.wallMs / 1000);
  const amount = usage.cpuSeconds * price.cpu + gbSeconds * price.memory;
  return { amountMicro: Math.ceil(amount * MICRO - 1e-6), gbSeconds };
}

export const toMicro = (units: number) => Math.round(units * MICRO);

/** An account's balances in currency units: free credits, paid credits and their total. */
export function balancesOf(a: Pick<AccountRow, "freeCreditsMicro" | "paidCreditsMicro">) {
  return {
    free: a.freeCreditsMicro / MICRO,
    paid: a.paidCreditsMicro / MICRO,
    total: (a.freeCreditsMicro + a.paidCreditsMicro) / MICRO,
  };
}
