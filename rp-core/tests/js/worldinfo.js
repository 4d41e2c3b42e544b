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

function run(c) {
    const win = (d) => c.messages.slice(Math.max(0, c.messages.length - d)).reverse().join('\n');
    const hits = [];
    const on = new Set();
    c.entries.forEach((e, i) => {
        if (e.disabled) return;
        if (e.constant || activates(e, win(e.depth ?? c.depth))) {
            hits.push([i, false]);
            on.add(i);
        }
    });
    if (c.recursive) {
        let fed = 0;
        const added = [];
        for (let level = 0; level < 10; level++) {
            const more = hits.slice(fed).map(([i]) => c.entries[i])
                .filter((e) => !e.preventRecursion).map((e) => e.content);
            fed = hits.length;
            if (more.length === 0) break;
            added.push(...more);
            const rec = added.join('\n');
            const before = hits.length;
            c.entries.forEach((e, i) => {
                if (e.disabled || e.constant || e.excludeRecursion || on.has(i)) return;
                if (activates(e, win(e.depth ?? c.depth) + '\n' + rec)) {
                    hits.push([i, true]);
                    on.add(i);
                }
            });
            if (hits.length === before) break;
        }
    }
    return hits;
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => process.stdout.write(JSON.stringify(run(JSON.parse(line))) + '\n'));
