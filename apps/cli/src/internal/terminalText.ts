/**
 * Text a server sent, made safe to print on a terminal. A terminal acts on
 * control characters instead of showing them: ESC starts the sequences that
 * clear the screen, move the cursor, set the window title or write the
 * clipboard (OSC 52), U+009B is a CSI by itself, and `\r` or a backspace let
 * later text overwrite what came before. A server is not trusted to drive the
 * user's terminal, so every such character is printed as a visible escape,
 * never as itself: as JSON writes it (`\u001b`, `\u009b`, `\r`, `\b`), the
 * same as `--json` shows, and JSON that JSON.stringify made (which leaves DEL
 * and C1 as they are) stays JSON. The CLI's own formatting (the progress
 * line's `\r` and erase-line) is added around escaped text, never escaped.
 */

/**
 * C0 controls, DEL and C1 controls: every character a terminal may act on;
 * and the bidirectional overrides and isolates, which make a terminal show
 * text in another order than it is (a name that reads as another).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching the control characters is the point.
const controls = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/** The same but `\t` and `\n`, and a `\r\n` line end whole: what a multi-line text keeps as layout. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching the control characters is the point.
const blockControls = /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/** What JSON.stringify leaves as it is in a string but a terminal acts on: DEL, C1, the bidi controls. */
const jsonLeft = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

const named: { readonly [c: string]: string } = { "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r" }

/** One control character as a JSON string escapes it: `\n`, `\u001b`, `\u009b`, `\u202e`. */
const visible = (c: string): string => named[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`

/** `text` on one line: every control character, `\n` and `\t` too, shown escaped (a table cell, a name, a log line). */
export const line = (text: string): string => text.replace(controls, visible)

/**
 * `text` as lines: `\n` and `\t` kept (the terminal lays them out, and
 * neither can hide what was printed before), a `\r\n` line end printed as
 * `\n` (a carriage return right before a line feed overwrites nothing), every
 * other control character shown escaped (a tool's text, a resource's contents).
 */
export const lines = (text: string): string => text.replace(blockControls, (c) => (c === "\r\n" ? "\n" : visible(c)))

/**
 * `value` as JSON (`indent` spaces, none for one line), with every character
 * a terminal acts on escaped: JSON.stringify escapes C0 in strings, this the
 * rest (such a character can stand only inside a string, so the JSON parses
 * to the same value). The `--json` output of every command.
 */
export const json = (value: unknown, indent?: number): string =>
  JSON.stringify(value, null, indent).replace(jsonLeft, visible)
