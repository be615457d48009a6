(call method: (identifier) @name) @reference.call
