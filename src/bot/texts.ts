/** The bot's Russian words (spec §1.9): its commands as setMyCommands shows them, help, and the common replies. */
import { formatUsd } from "../money/usd.ts";

/** The commands every chat sees in Telegram's menu (the shop's fixed list). */
export const COMMANDS = [
  { command: "start", description: "Начать: что умеет бот" },
  { command: "buy", description: "Купить пакет или пополнить ключ" },
  { command: "keys", description: "Мои ключи: сменить или отозвать" },
  { command: "balance", description: "Баланс, удержания и последние запросы" },
  { command: "caps", description: "Лимиты расходов и резерва" },
  { command: "theta", description: "Приостановить или возобновить theta" },
  { command: "alerts", description: "Предупреждение о низком балансе" },
  { command: "help", description: "Список команд" },
] as const;

/** What an admin chat may also send (TELEGRAM_ADMIN_CHAT_IDS); not in the public menu. */
export const ADMIN_HELP = [
  "Команды оператора:",
  "/confirm <номер платежа> — подтвердить ручную оплату и зачислить её",
  "/refund <номер платежа> — вернуть платёж (звёзды — через Telegram) и списать кредит",
  "/method <способ> on|off — включить или выключить способ оплаты",
].join("\n");

export const HELP = [
  "Этот бот продаёт ключи gd-… к шлюзу моделей и управляет ими. Команды:",
  ...COMMANDS.map((c) => `/${c.command} — ${c.description}`),
].join("\n");

export const START = [
  "Здравствуйте! Здесь можно купить ключ к шлюзу и пополнять его баланс.",
  "Первая покупка выдаёт ключ; следующие пополняют его.",
  "",
  HELP,
].join("\n");

export const T = {
  privateOnly: "Бот работает только в личном чате: ключи не показываются в группах.",
  tooMany: (seconds: number) => `Слишком много команд подряд. Подождите ${seconds} с и повторите.`,
  failed: "Не получилось выполнить команду. Попробуйте ещё раз чуть позже.",
  stale: "Эта кнопка устарела. Откройте команду заново.",
  keyNotFound: "Ключ не найден среди ключей этого чата.",
  noKeys: "У вас пока нет ключей. Купите пакет: /buy",
  noPackages: "Пакетов сейчас нет в продаже. Загляните позже.",
  noMethods: "Сейчас нет доступных способов оплаты. Попробуйте позже.",
  choosePackage: "Выберите пакет:",
  chooseMethod: "Выберите способ оплаты:",
  chooseKeyToTopUp: "Какой ключ пополнить?",
  chooseKey: "Выберите ключ:",
  cancelled: "Отменено.",
  buyButton: "Пополнить",
} as const;

/** "$12.50": exact, as the gateway counts (pico-USD, trailing zeros trimmed to cents). */
export function usd(v: bigint): string {
  return v < 0n ? `-$${formatUsd(-v)}` : `$${formatUsd(v)}`;
}

/**
 * A price given in its currency's smallest unit as a person reads it: Stars are whole ("50 XTR"); other
 * currencies use their ISO minor unit ("1990 RUB" in kopecks → "19.90 RUB").
 */
export function price(amount: number, currency: string): string {
  const digits = currency === "XTR" ? 0 : minorDigits(currency);
  if (digits === 0) return `${amount} ${currency}`;
  const scale = 10 ** digits;
  const whole = Math.trunc(amount / scale);
  const frac = String(Math.abs(amount % scale)).padStart(digits, "0");
  return `${whole}.${frac} ${currency}`;
}

function minorDigits(currency: string): number {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions()
      .maximumFractionDigits ??
      2;
  } catch {
    return 2; // not an ISO code Intl knows
  }
}
