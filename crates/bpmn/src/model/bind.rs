//! Handler names bound to external-worker topics: the one change an engine makes to a model
//! after parsing it, so that a file naming a Java class (`camunda:class="com.acme.Mailer"`)
//! runs unchanged, its work done by a worker in any language.

use super::{Definitions, Implementation, IoMapping, IoParameter, IoValue, NodeKind};

impl Definitions {
    /// Turns every service task whose handler `topic_of` gives a topic for into an external
    /// task on that topic. A bean method call's arguments (`${svc.post(order, 2)}`) become the
    /// input parameter `arguments` (a list), a variable of the task's own token while it runs
    /// that the worker fetches with the others. Returns how many tasks were bound.
    pub fn bind_topics(&mut self, topic_of: impl Fn(&str) -> Option<String>) -> usize {
        let mut bound = 0;
        for node in self.processes.iter_mut().flat_map(|p| p.nodes.iter_mut()) {
            let NodeKind::ServiceTask(task) = &mut node.kind else { continue };
            let Implementation::Handler { name, .. } = &task.implementation else { continue };
            let Some(topic) = topic_of(name) else { continue };
            task.implementation = Implementation::External { topic };
            if !task.arguments.is_empty() {
                let list = std::mem::take(&mut task.arguments).into_iter().map(IoValue::Text).collect();
                let io = node.io.get_or_insert_with(IoMapping::default);
                io.inputs.retain(|p| p.name != "arguments");
                io.inputs.push(IoParameter { name: "arguments".into(), value: IoValue::List(list) });
            }
            bound += 1;
        }
        bound
    }
}
