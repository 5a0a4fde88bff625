/**
 * Letters of other scripts that look like Latin ones (a Cyrillic `о` in `ignоre`, a Greek `ο` in
 * `npmjs.οrg`): the threat scan reads text with them folded to their Latin twins, so a look-alike
 * spelling meets the same patterns, and flags a word that mixes both scripts, which no honest note
 * needs (a Russian word is all Cyrillic; an English one all Latin).
 *
 * Only letters a reader cannot tell apart from the Latin one in common fonts: not `μ` (micro), not
 * `π`, `Δ` or `λ`, which formulas use beside Latin letters.
 */

const PAIRS: readonly (readonly [string, string])[] = [
  // Cyrillic
  ["а", "a"], ["в", "b"], ["е", "e"], ["к", "k"], ["м", "m"], ["н", "h"], ["о", "o"], ["р", "p"], ["с", "c"], ["т", "t"],
  ["у", "y"], ["х", "x"], ["і", "i"], ["ј", "j"], ["ѕ", "s"], ["ԁ", "d"], ["ԛ", "q"], ["ԝ", "w"], ["ӏ", "l"], ["һ", "h"],
  ["А", "A"], ["В", "B"], ["Е", "E"], ["К", "K"], ["М", "M"], ["Н", "H"], ["О", "O"], ["Р", "P"], ["С", "C"], ["Т", "T"],
  ["Х", "X"], ["І", "I"], ["Ј", "J"], ["Ѕ", "S"], ["Ү", "Y"],
  // Greek
  ["ο", "o"], ["α", "a"], ["ι", "i"], ["ν", "v"], ["ρ", "p"], ["κ", "k"], ["υ", "u"],
  ["Α", "A"], ["Β", "B"], ["Ε", "E"], ["Ζ", "Z"], ["Η", "H"], ["Ι", "I"], ["Κ", "K"], ["Μ", "M"], ["Ν", "N"], ["Ο", "O"],
  ["Ρ", "P"], ["Τ", "T"], ["Υ", "Y"], ["Χ", "X"],
];

const TO_LATIN = new Map<string, string>(PAIRS);
const LOOK_ALIKE = new RegExp(`[${PAIRS.map(([from]) => from).join("")}]`, "gu");
/** A run of letters (and the digits and joiners inside a word or a host name). */
const WORD = /[\p{L}\p{M}]+/gu;
const LATIN = /\p{Script=Latin}/u;
const LOOK_ALIKE_ONE = new RegExp(LOOK_ALIKE.source, "u");

/**
 * `text` with the look-alike letters of words that read as Latin folded to their Latin twins: a
 * word made only of Latin letters and look-alikes (`ѕуѕtеm`, `сору`). A word with any other letter
 * of its script (`отправляй`) is a word of that language and stays as it is, so patterns written
 * for that language still see it.
 */
export function foldConfusables(text: string): string {
  if (!LOOK_ALIKE_ONE.test(text)) return text;
  return text.replace(WORD, (word) => {
    if (!LOOK_ALIKE_ONE.test(word)) return word;
    for (const char of word) if (!LATIN.test(char) && !TO_LATIN.has(char) && /\p{L}/u.test(char)) return word;
    return word.replace(LOOK_ALIKE, (char) => TO_LATIN.get(char) ?? char);
  });
}

/**
 * The first word that mixes Latin letters with look-alikes of another script, or undefined.
 * An all-Cyrillic or all-Greek word is a word of that language and passes; so does a word with a
 * Cyrillic or Greek letter that looks like no Latin one.
 */
export function mixedScriptWord(text: string): string | undefined {
  for (const [word] of text.matchAll(WORD)) {
    if (word.length < 2 || !LATIN.test(word) || !LOOK_ALIKE_ONE.test(word)) continue;
    // Every non-Latin letter a look-alike: a disguised Latin word, not a loanword in its own script.
    const others = [...word].filter((char) => /\p{L}/u.test(char) && !LATIN.test(char));
    if (others.every((char) => TO_LATIN.has(char))) return word;
  }
  return undefined;
}
