//! The kinds of definition an outline names (function, class, section …),
//! as the definition queries' captures spell them (`definition.<kind>`).

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Interface,
    Trait,
    Impl,
    Module,
    Namespace,
    Type,
    Constant,
    Macro,
    Section,
}

impl SymbolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Interface => "interface",
            SymbolKind::Trait => "trait",
            SymbolKind::Impl => "impl",
            SymbolKind::Module => "module",
            SymbolKind::Namespace => "namespace",
            SymbolKind::Type => "type",
            SymbolKind::Constant => "constant",
            SymbolKind::Macro => "macro",
            SymbolKind::Section => "section",
        }
    }

    pub(crate) fn from_capture(name: &str) -> Option<SymbolKind> {
        let kind = name.strip_prefix("definition.")?;
        [
            SymbolKind::Function,
            SymbolKind::Method,
            SymbolKind::Class,
            SymbolKind::Struct,
            SymbolKind::Enum,
            SymbolKind::Interface,
            SymbolKind::Trait,
            SymbolKind::Impl,
            SymbolKind::Module,
            SymbolKind::Namespace,
            SymbolKind::Type,
            SymbolKind::Constant,
            SymbolKind::Macro,
            SymbolKind::Section,
        ]
        .into_iter()
        .find(|k| k.as_str() == kind)
    }

    /// When two patterns match one definition, the specific kind wins
    /// (a Rust `fn` in an `impl` is a method, a Go `type X struct` a struct).
    pub(super) fn is_generic(self) -> bool {
        matches!(self, SymbolKind::Function | SymbolKind::Type)
    }

    /// Kinds whose directly nested functions are methods.
    pub(super) fn holds_methods(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Interface
                | SymbolKind::Trait
                | SymbolKind::Impl
        )
    }
}
