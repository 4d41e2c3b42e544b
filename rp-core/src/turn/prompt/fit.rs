//! Fitting a prompt to its budget and rendering it (docs/turn.md §4, "Trimming"): pieces are
//! dropped in the documented order until the rendered prompt fits, then the template is filled.

use super::{
    Prompt, PromptOptions, PromptPiece, PromptTemplate, SCENE_SUMMARY, SYSTEM_LINE, Section,
    TokenCounter,
};
use crate::model::EntityId;
use crate::turn::{ChatMessage, Role};

/// Drops pieces in the documented order until the rendered prompt fits, then renders it.
pub(super) fn fit(
    name: &str,
    speaker: EntityId,
    pieces: Vec<PromptPiece>,
    options: &PromptOptions,
    counter: &dyn TokenCounter,
) -> crate::Result<Prompt> {
    let overhead = {
        let empty = render(name, &[], &options.template);
        empty
            .iter()
            .map(|m| counter.count(&m.content))
            .sum::<usize>()
    };
    let heading: Vec<usize> = Section::ALL
        .iter()
        .map(|s| counter.count(s.heading()) + 1)
        .collect();
    // The estimate: template, the heading of each section with pieces, each piece and its
    // line break. It errs high; the rendered prompt is counted exactly below.
    let estimate = |dropped: &[bool]| -> usize {
        let mut used = [false; Section::ALL.len()];
        let mut total = overhead;
        for (i, p) in pieces.iter().enumerate() {
            if !dropped[i] {
                used[p.section as usize] = true;
                total += p.tokens + 1;
            }
        }
        total
            + (0..used.len())
                .filter(|&s| used[s])
                .map(|s| heading[s])
                .sum::<usize>()
    };
    let line = |p: &PromptPiece| super::is_line(p);
    // Lorebook entries placed among the lines go with the lore.
    let lore = |p: &PromptPiece| {
        p.section == Section::Lore
            || (p.section == Section::Dialogue && !line(p) && p.why != SYSTEM_LINE)
    };
    let newest_line = pieces.iter().rposition(line);
    let mut order: Vec<usize> = Vec::new();
    // 1. Recalled memories, lowest score first.
    let mut recalled: Vec<usize> = (0..pieces.len())
        .filter(|&i| pieces[i].section == Section::Memories && pieces[i].score.is_some())
        .collect();
    recalled.sort_by(|&a, &b| {
        pieces[a]
            .score
            .partial_cmp(&pieces[b].score)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    order.extend(recalled);
    // 2. Lore, least recently mentioned (they are most recent first) first.
    order.extend((0..pieces.len()).rev().filter(|&i| lore(&pieces[i])));
    // 3. Dialogue, oldest first, never the newest line.
    order.extend((0..pieces.len()).filter(|&i| line(&pieces[i]) && Some(i) != newest_line));
    // 4. Events, 5. threads: last first; 6. scene summaries, oldest (first shown) first;
    // 7. pinned memories, last first.
    for s in [Section::Events, Section::Threads] {
        // A pending requirement's warning is never dropped (docs/requirements.md).
        let decision = |p: &PromptPiece| p.why == crate::log::DECISION_REQUIRED;
        order.extend(
            (0..pieces.len())
                .rev()
                .filter(|&i| pieces[i].section == s && !decision(&pieces[i])),
        );
    }
    let memory = |p: &PromptPiece| p.section == Section::Memories && p.score.is_none();
    order.extend(
        (0..pieces.len()).filter(|&i| memory(&pieces[i]) && pieces[i].why == SCENE_SUMMARY),
    );
    order.extend(
        (0..pieces.len())
            .rev()
            .filter(|&i| memory(&pieces[i]) && pieces[i].why != SCENE_SUMMARY),
    );
    let mut dropped = vec![false; pieces.len()];
    let mut drop_order = Vec::new();
    let mut next = order.into_iter();
    let render_kept = |dropped: &[bool]| -> (Vec<ChatMessage>, usize) {
        let kept: Vec<&PromptPiece> = pieces
            .iter()
            .zip(dropped)
            .filter(|(_, d)| !**d)
            .map(|(p, _)| p)
            .collect();
        let m = render(name, &kept, &options.template);
        let t = m.iter().map(|x| counter.count(&x.content)).sum();
        (m, t)
    };
    // How far the estimate errs for the whole prompt: dropping pieces only shrinks that.
    let none = vec![false; pieces.len()];
    let (full_messages, full_tokens) = render_kept(&none);
    if full_tokens <= options.budget_tokens {
        return Ok(Prompt {
            speaker,
            messages: full_messages,
            pieces,
            trimmed: Vec::new(),
            tokens: full_tokens,
            budget_tokens: options.budget_tokens,
            lore_timers: None,
        });
    }
    let slack = estimate(&none).saturating_sub(full_tokens);
    while estimate(&dropped).saturating_sub(slack) > options.budget_tokens {
        let Some(i) = next.next() else { break };
        dropped[i] = true;
        drop_order.push(i);
    }
    // The corrected estimate may err low by a rounding or two: this makes the budget exact.
    let (mut messages, mut tokens) = render_kept(&dropped);
    while tokens > options.budget_tokens {
        let Some(i) = next.next() else { break };
        dropped[i] = true;
        drop_order.push(i);
        (messages, tokens) = render_kept(&dropped);
    }
    let trimmed = drop_order.iter().map(|&i| pieces[i].clone()).collect();
    let kept = pieces
        .into_iter()
        .zip(&dropped)
        .filter(|(_, d)| !**d)
        .map(|(p, _)| p)
        .collect();
    Ok(Prompt {
        speaker,
        messages,
        pieces: kept,
        trimmed,
        tokens,
        budget_tokens: options.budget_tokens,
        lore_timers: None,
    })
}

/// Renders `pieces` through `template`.
pub(super) fn render(
    name: &str,
    pieces: &[&PromptPiece],
    template: &PromptTemplate,
) -> Vec<ChatMessage> {
    let fill = |text: &str| -> String {
        let mut out = text.replace("{{name}}", name);
        for s in Section::ALL {
            let key = format!("{{{{{}}}}}", s.as_str());
            if !out.contains(&key) {
                continue;
            }
            let lines: Vec<&str> = pieces
                .iter()
                .filter(|p| p.section == s)
                .map(|p| p.text.as_str())
                .collect();
            let body = if lines.is_empty() {
                String::new()
            } else {
                format!("{}\n{}", s.heading(), lines.join("\n"))
            };
            out = out.replace(&key, &body);
        }
        collapse_blank_lines(&out)
    };
    let mut messages = vec![ChatMessage::new(Role::System, fill(&template.system))];
    if !template.user.trim().is_empty() {
        messages.push(ChatMessage::new(Role::User, fill(&template.user)));
    }
    messages
}

fn collapse_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.trim().lines() {
        if line.trim().is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}
