//! The messages of a query's generations: instructions, the capabilities open now, the
//! question and the context; the retry after an output that could not be read.

use super::capability::{InfoCapability, format_capabilities_for_prompt, response_schema};
use super::context::QueryContext;
use crate::model::WorldQuery;
use crate::turn::{ChatMessage, GenerateRequest, Purpose, Role, Sampling};

/// The request of a query round. With `forced`, no capability is offered and only an answer
/// may come back.
pub(crate) fn request(
    query: &WorldQuery,
    context: &QueryContext,
    capabilities: &[InfoCapability],
    forced: Option<&str>,
    asker: Option<&str>,
) -> GenerateRequest {
    let offered: &[InfoCapability] = if forced.is_some() { &[] } else { capabilities };
    let mut system = String::from("You answer questions about a world");
    match asker {
        Some(name) => system.push_str(&format!(
            ", as {name} knows it: use only the context below, which is what {name} knows"
        )),
        None => system.push_str(", using only the context below"),
    }
    system.push_str(
        ". Entities are written [id] Name.\nReply with one JSON object and nothing else.\n\n\
         To answer: {\"type\": \"answer\", \"content\": \"...\", \"confidence\": \"high\" | \
         \"medium\" | \"low\", \"sources\": [{\"entity_id\": <id of the context>, \
         \"contribution\": \"...\", \"relevance\": <0 to 1>}], \"suggested_follow_ups\": \
         [\"...\"]}\n",
    );
    if offered.is_empty() {
        if let Some(reason) = forced {
            system.push_str(&format!(
                "\nNo more information can be fetched ({reason}). Answer now from the context, \
                 and say what remains uncertain.\n"
            ));
        }
    } else {
        system.push_str(
            "\nIf the context is not enough, ask for more instead: {\"type\": \
             \"needs_more_info\", \"reason\": \"...\", \"requests\": [{\"capability_id\": \
             \"...\", \"params\": {...}, \"reason\": \"...\"}]}\nCapabilities (use only these, \
             with only the ids and values listed):\n",
        );
        system.push_str(&format_capabilities_for_prompt(offered));
    }
    let user = format!("Question: {}\n\nContext:\n{}", query.text, context.render());
    GenerateRequest {
        purpose: Purpose::Query,
        messages: vec![
            ChatMessage::new(Role::System, system),
            ChatMessage::new(Role::User, user),
        ],
        params: Sampling {
            temperature: Some(query.config.temperature),
            ..Sampling::default()
        },
        json_schema: Some(response_schema(context, offered)),
        tools: Vec::new(),
    }
}

/// The request that retries `first` after `output` could not be read for `problem`.
pub(crate) fn retry(first: &GenerateRequest, output: &str, problem: &str) -> GenerateRequest {
    let mut request = first.clone();
    let shown: String = output.chars().take(4000).collect();
    request
        .messages
        .push(ChatMessage::new(Role::Assistant, shown));
    request.messages.push(ChatMessage::new(
        Role::User,
        format!(
            "That reply could not be used: {problem}\nReply again with one JSON object as \
             described, and nothing else."
        ),
    ));
    request
}
