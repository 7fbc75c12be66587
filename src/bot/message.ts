/**
 * A message text built from parts, with Telegram entities instead of a parse mode: a key's secret goes in a
 * `code` entity (tap to copy) and nothing (package names, payment details) ever needs escaping. Offsets are
 * UTF-16 code units, which is what JavaScript string lengths count and what the Bot API expects.
 */
import type { MessageEntity } from "grammy/types";

export class Msg {
  text = "";
  readonly entities: MessageEntity[] = [];

  /** Plain text. */
  add(s: string): this {
    this.text += s;
    return this;
  }

  /** Monospace text (a key, a payment id): copied whole with one tap. */
  code(s: string): this {
    return this.#entity("code", s);
  }

  bold(s: string): this {
    return this.#entity("bold", s);
  }

  /** A line break after the text so far. */
  nl(): this {
    this.text += "\n";
    return this;
  }

  #entity(type: "code" | "bold", s: string): this {
    if (s.length > 0) this.entities.push({ type, offset: this.text.length, length: s.length });
    this.text += s;
    return this;
  }
}
