// A transcription of SillyTavern's World Info matching rules (public/scripts/world-info.js:
// parseRegexFromString, matchKeys with transformString and the whole-word regex, the
// selective logic, the scan buffer newest first, recursion over the recursion buffer), for the
// differential test rp-core/tests/lore_vs_node.rs. Reads one JSON case per line, writes the
// activated entries ([index, by recursion]) per line.
'use strict';
const readline = require('readline');

function parseRegexFromString(input) {
    const match = input.match(/^\/([\w\W]+?)\/([gimsuy]*)$/);
    if (!match) return null;
    try {
        return new RegExp(match[1], match[2]);
    } catch {
        return null;
    }
}

function escapeRegex(string) {
    return string.replace(/[/\-\\^$*+?.()|[\]{}]/g, '\\$&');
}

function matchKeys(haystack, needle, entry) {
    needle = needle.trim();
    const keyRegex = parseRegexFromString(needle);
    if (keyRegex) return keyRegex.test(haystack);
    if (!entry.caseSensitive) {
        haystack = haystack.toLowerCase();
        needle = needle.toLowerCase();
    }
    if (needle.length === 0) return false;
    if (entry.matchWholeWords) {
        const keyWords = needle.split(/\s+/);
        if (keyWords.length > 1) return haystack.includes(needle);
        return new RegExp(`(?:^|\\W)(${escapeRegex(needle)})(?:$|\\W)`).test(haystack);
    }
    return haystack.includes(needle);
}

function activates(entry, text) {
    const primary = entry.keys.find((k) => matchKeys(text, k, entry));
    if (primary === undefined) return false;
    if (entry.selective && entry.secondary.length) {
        let any = false;
        let all = true;
        for (const k of entry.secondary) {
            const m = matchKeys(text, k, entry);
            any = any || m;
            all = all && m;
        }
        switch (entry.logic) {
            case 0: return any;
            case 1: return !all;
            case 2: return !any;
            case 3: return all;
        }
    }
    return true;
}

// The scan loop of checkWorldInfo: an initial pass over the chat, then passes of recursion
// (world_info_max_recursion_steps = 11: the first pass and ten more), each scanning what is
// not yet active against the chat window and the recursion buffer. Timed effects as the scan
// sees them: `delay` (chat length), and the sticky and cooldown sets the case gives (sticky
// bypasses cooldown, delayUntilRecursion and excludeRecursion, and activates without keys).
// delayUntilRecursion: levels (true is 1); the scan starts at the lowest, and when it would
// stop with levels left and text in the recursion buffer, it goes on at the next.
function run(c) {
    const win = (d) => c.messages.slice(Math.max(0, c.messages.length - d)).reverse().join('\n');
    const sticky = new Set(c.sticky || []);
    const cooldown = new Set(c.cooldown || []);
    const level = (e) => (e.delayUntilRecursion === true ? 1 : Number(e.delayUntilRecursion || 0));
    const levels = [...new Set(c.entries.filter((e) => level(e) > 0).map(level))].sort((a, b) => a - b);
    let currentLevel = levels.shift() ?? 0;
    const recurse = [];
    const hits = [];
    const on = new Set();
    let recursion = false;
    for (let count = 0; count < 11; count++) {
        const now = [];
        c.entries.forEach((e, i) => {
            if (on.has(i) || e.disabled) return;
            const isSticky = sticky.has(i);
            if (e.delay && c.messages.length < e.delay) return;
            if (cooldown.has(i) && !isSticky) return;
            if (!recursion && level(e) && !isSticky) return;
            if (recursion && level(e) > currentLevel && !isSticky) return;
            if (recursion && c.recursive && e.excludeRecursion && !isSticky) return;
            if (e.constant || isSticky) {
                now.push(i);
                return;
            }
            let text = win(e.depth ?? c.depth);
            if (recurse.length) text += '\n' + recurse.join('\n');
            if (activates(e, text)) now.push(i);
        });
        for (const i of now) {
            hits.push([i, recursion]);
            on.add(i);
        }
        const feeding = now.filter((i) => !c.entries[i].preventRecursion);
        let next = c.recursive && feeding.length > 0;
        if (!next && levels.length && recurse.length) {
            next = true;
            currentLevel = levels.shift();
        }
        if (!next) break;
        recursion = true;
        const text = feeding.map((i) => c.entries[i].content).join('\n');
        if (text) recurse.push(text);
    }
    return hits;
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => process.stdout.write(JSON.stringify(run(JSON.parse(line))) + '\n'));
