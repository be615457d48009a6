//! Outline per language on small fixtures with exact ranges, covering the
//! fixes each grammar's tags query needs.

use super::tests::assert_outline;
use super::*;

pub(super) const RUST: &str = r#"//! crate doc
use std::fmt;

/// A status.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AuthStatus {
    Ok,
    Denied,
}

pub struct Client {
    id: u32,
}

impl Client {
    pub fn new() -> Self {
        Client { id: 0 }
    }

    #[inline]
    fn id(&self) -> u32 {
        fn helper() -> u32 { 1 }
        helper()
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "c")
    }
}

pub trait Auth {
    fn status(&self) -> AuthStatus;
    fn check(&self) -> bool {
        true
    }
}

const LIMIT: usize = 3;
macro_rules! m { () => {} }
type Alias = Vec<u8>;

#[cfg(test)]
mod tests {
    #[test]
    fn works() {}
}
"#;

#[test]
fn rust_impls_traits_and_attributes() {
    assert_outline(
        Language::Rust,
        RUST,
        &[
            "enum AuthStatus @ 5-10",
            "struct Client @ 12-14",
            "impl Client @ 16-26",
            "  method new @ 17-19",
            "  method id @ 21-25",
            "    function helper @ 23-23",
            "impl fmt::Display for Client @ 28-32",
            "  method fmt @ 29-31",
            "trait Auth @ 34-39",
            "  method status @ 35-35",
            "  method check @ 36-38",
            "constant LIMIT @ 41-41",
            "macro m @ 42-42",
            "type Alias @ 43-43",
            "module tests @ 45-49",
            "  function works @ 47-48",
        ],
    );
}

#[test]
fn rust_method_matched_by_two_patterns_is_listed_once_as_method() {
    let o = outline(Language::Rust, RUST.as_bytes());
    let news: Vec<_> = o.symbols.iter().filter(|s| s.name == "new").collect();
    assert_eq!(news.len(), 1);
    assert_eq!(news[0].kind, SymbolKind::Method);
    // In a module, a fn stays a function.
    let works = o.symbols.iter().find(|s| s.name == "works").unwrap();
    assert_eq!(works.kind, SymbolKind::Function);
}

pub(super) const TS: &str = r#"import { x } from "y";

export interface Shape {
  area(): number;
  name: string;
}

type Id = string | number;

enum Color { Red, Green }

@Component({
  selector: "app",
})
export class Widget implements Shape {
  private count = 0;
  handle = () => {
    this.count++;
  };

  constructor(private readonly id: Id) {}

  @Input()
  area(): number {
    const inner = (n: number) => n * 2;
    return inner(1);
  }

  get name(): string { return "w"; }
}

export const makeWidget = async (id: Id): Promise<Widget> => {
  return new Widget(id);
};

export function helper<T>(a: T): T {
  return a;
}

namespace Geometry {
  export function dist(): number { return 0; }
}

abstract class Base {
  abstract run(): void;
}
"#;

#[test]
fn typescript_uses_js_and_ts_patterns_with_decorators_and_arrow_consts() {
    assert_outline(
        Language::TypeScript,
        TS,
        &[
            "interface Shape @ 3-6",
            "  method area @ 4-4",
            "type Id @ 8-8",
            "enum Color @ 10-10",
            // Class decorators sit in the export statement; member
            // decorators are siblings in the class body.
            "class Widget @ 12-30",
            "  method handle @ 17-19",
            "  method constructor @ 21-21",
            "  method area @ 23-27",
            "    function inner @ 25-25",
            "  method name @ 29-29",
            "function makeWidget @ 32-34",
            "function helper @ 36-38",
            "module Geometry @ 40-42",
            "  function dist @ 41-41",
            "class Base @ 44-46",
            "  method run @ 45-45",
        ],
    );
}

/// Issue 29: exported values are part of a module's surface, so the outline
/// lists them (whatever their value); a local const is not.
#[test]
fn exported_consts_of_any_value_are_constants() {
    let src = "export const handler = async (req: Request): Promise<Response> => {\n  return new Response(\"x\");\n};\nexport const LIMIT = 10;\nexport const settings: Settings = {\n  a: 1,\n};\nexport const wrapped = memo(() => 1);\nexport const ids = [1, 2] as const;\nconst local = 3;\n";
    assert_outline(
        Language::TypeScript,
        src,
        &[
            "function handler @ 1-3",
            "constant LIMIT @ 4-4",
            "constant settings @ 5-7",
            "constant wrapped @ 8-8",
            "constant ids @ 9-9",
        ],
    );
    assert_outline(
        Language::JavaScript,
        "export const LIMIT = 10;\nexport let names = new Set();\nconst local = 1;\n",
        &["constant LIMIT @ 1-1", "constant names @ 2-2"],
    );
}

#[test]
fn decorators_of_unexported_classes_and_members_join_their_range() {
    let src = "@Injectable()\nclass Service {\n  @Input() label = 1;\n\n  @HostListener('click')\n  @Debounce(10)\n  onClick(): void {}\n}\n";
    assert_outline(
        Language::TypeScript,
        src,
        &["class Service @ 1-8", "  method onClick @ 5-7"],
    );
}

#[test]
fn tsx_components() {
    let src = r#"import React, { useState } from "react";

type Props = { label: string };

export const Button: React.FC<Props> = ({ label }) => {
  const [n, setN] = useState(0);
  const onClick = () => setN(n + 1);
  return <button onClick={onClick}>{label} {n}</button>;
};

export default function Page() {
  return (
    <main>
      <Button label="go" />
    </main>
  );
}
"#;
    assert_outline(
        Language::Tsx,
        src,
        &[
            "type Props @ 3-3",
            "function Button @ 5-9",
            "  function onClick @ 7-7",
            "function Page @ 11-17",
        ],
    );
}

#[test]
fn javascript_with_jsx_class_fields_and_assigned_functions() {
    let src = r#"import React from "react";

export default function App({ items }) {
  const onClick = () => {
    console.log("x");
  };
  return (
    <div onClick={onClick}>
      {items.map((i) => <Item key={i} />)}
    </div>
  );
}

class Store {
  #secret = 1;
  handle = (e) => {};
  static create() {
    return new Store();
  }
  *gen() {}
}

module.exports.run = function () {};
var legacy = function named() {};
const Klass = class {};
"#;
    assert_outline(
        Language::JavaScript,
        src,
        &[
            "function App @ 3-12",
            "  function onClick @ 4-6",
            "class Store @ 14-21",
            "  method handle @ 16-16",
            "  method create @ 17-19",
            "  method gen @ 20-20",
            "function run @ 23-23",
            "function legacy @ 24-24",
            "  function named @ 24-24",
            "class Klass @ 25-25",
        ],
    );
}

#[test]
fn python_decorators_nested_functions_and_methods() {
    let src = r#"import os

LIMIT = 10

def top(a):
    def inner(b):
        return b
    return inner(a)

@dataclass
class Point:
    x: int

    @property
    def norm(self):
        return 0

    async def fetch(self):
        pass
"#;
    assert_outline(
        Language::Python,
        src,
        &[
            "constant LIMIT @ 3-3",
            "function top @ 5-8",
            "  function inner @ 6-7",
            "class Point @ 10-19",
            "  method norm @ 14-16",
            "  method fetch @ 18-19",
        ],
    );
}

#[test]
fn go_methods_are_named_by_receiver_and_types_by_their_body() {
    let src = r#"package main

const (
	A = iota
	B
)

type Client struct {
	id int
}

type Store interface {
	Get(k string) string
}

type ID = string

func (c *Client) Close() error {
	return nil
}

func (l *List[T]) Push(v T) {}

func main() {
	f := func() {}
	f()
}
"#;
    assert_outline(
        Language::Go,
        src,
        &[
            "constant A @ 4-4",
            "constant B @ 5-5",
            "struct Client @ 8-10",
            "interface Store @ 12-14",
            "  method Get @ 13-13",
            "type ID @ 16-16",
            "method Client.Close @ 18-20",
            "method List.Push @ 22-22",
            "function main @ 24-27",
        ],
    );
}

#[test]
fn java_annotations_constructors_and_nested_types() {
    let src = r#"package x;

@Entity
public class User {
    private int id;

    public User(int id) { this.id = id; }

    @Override
    public String toString() {
        return "u";
    }

    enum Role { ADMIN, USER }

    interface Visitor {
        void visit(User u);
    }

    record Pair(int a, int b) {}
}
"#;
    assert_outline(
        Language::Java,
        src,
        &[
            "class User @ 3-21",
            "  method User @ 7-7",
            "  method toString @ 9-12",
            "  enum Role @ 14-14",
            "  interface Visitor @ 16-18",
            "    method visit @ 17-17",
            "  class Pair @ 20-20",
        ],
    );
}

#[test]
fn c_function_ranges_cover_the_body_not_only_the_signature() {
    let src = r#"#include <stdio.h>

#define MAX(a, b) ((a) > (b) ? (a) : (b))

struct point {
	int x;
	int y;
};

typedef struct {
	int w;
} size2;

enum color { RED, GREEN };

int add(int a, int b);

static int *
make(int n)
{
	return NULL;
}

int apply(int (*fn)(int), int v, void g(int))
{
	int (*cb)(int) = fn;
	return cb(v);
}
"#;
    assert_outline(
        Language::C,
        src,
        &[
            "macro MAX @ 3-3",
            "struct point @ 5-8",
            "type size2 @ 10-12",
            "enum color @ 14-14",
            "function add @ 16-16",
            "function make @ 18-22",
            "function apply @ 24-28",
        ],
    );
}

#[test]
fn cpp_namespaces_templates_and_out_of_class_methods() {
    let src = r#"#include <vector>

namespace geo {
namespace detail {
int helper() { return 1; }
}

template <typename T>
class Box {
public:
    Box();
    ~Box();
    T get() const { return value; }
    bool operator==(const Box& o) const;
private:
    T value;
};

template <typename T>
T Box<T>::peek() const {
    return value;
}

struct Point { int x; };

using Vec = std::vector<int>;
}

int main() {
    return 0;
}
"#;
    assert_outline(
        Language::Cpp,
        src,
        &[
            "namespace geo @ 3-27",
            "  namespace detail @ 4-6",
            "    function helper @ 5-5",
            "  class Box @ 8-17",
            "    method Box @ 11-11",
            "    method ~Box @ 12-12",
            "    method get @ 13-13",
            "    method operator== @ 14-14",
            "  method Box<T>::peek @ 19-22",
            "  struct Point @ 24-24",
            "  type Vec @ 26-26",
            "function main @ 29-31",
        ],
    );
}

#[test]
fn ruby_modules_classes_and_singleton_methods() {
    let src = r#"require "json"

module Admin
  VERSION = "1.0"

  class User < Base
    def initialize(name)
      @name = name
    end

    def self.find(id)
      new(id)
    end
  end
end

class Admin::Role
end
"#;
    assert_outline(
        Language::Ruby,
        src,
        &[
            "module Admin @ 3-15",
            "  constant VERSION @ 4-4",
            "  class User @ 6-14",
            "    method initialize @ 7-9",
            "    method find @ 11-13",
            "class Admin::Role @ 17-18",
        ],
    );
}

#[test]
fn markdown_headings_nest_as_sections_without_trailing_blank_lines() {
    let src = "# Title\n\nIntro.\n\n## Install\n\nRun it.\n\n### From source\n\nBuild.\n\n## Usage\n\nText.\n\n# Second\n\nTail.\n";
    assert_outline(
        Language::Markdown,
        src,
        &[
            "section Title @ 1-15",
            "  section Install @ 5-11",
            "    section From source @ 9-11",
            "  section Usage @ 13-15",
            "section Second @ 17-19",
        ],
    );
}

#[test]
fn markdown_setext_headings_open_and_close_sections() {
    let src = "# Top\n\n## Usage\n\nSetext two\n----------\n\nBody.\n\n### Deeper\n\nx\n\nSetext one\n==========\n\n## Under one\n\ny\n";
    assert_outline(
        Language::Markdown,
        src,
        &[
            "section Top @ 1-12",
            "  section Usage @ 3-3",
            "  section Setext two @ 5-12",
            "    section Deeper @ 10-12",
            "section Setext one @ 14-19",
            "  section Under one @ 17-19",
        ],
    );
}

#[test]
fn a_syntax_error_in_the_middle_still_outlines_the_rest() {
    let rust = "fn a() {\n    let x = ;\n}\n\nstruct S { x: i32 }\nfn c() {}\n";
    assert_outline(
        Language::Rust,
        rust,
        &["function a @ 1-3", "struct S @ 5-5", "function c @ 6-6"],
    );
    let ts = "function a() {\n  const x = ;\n}\nfunction b(: number) {\n  return 1;\n}\nclass C {\n  m() { return 1 }\n}\n";
    assert_outline(
        Language::TypeScript,
        ts,
        &[
            "function a @ 1-3",
            "function b @ 4-6",
            "class C @ 7-9",
            "  method m @ 8-8",
        ],
    );
    let py = "class Broken:\n    def ok(self):\n        return 1\n    def bad(self):\n        return = = 2\n    def after(self):\n        return 3\n\ndef tail():\n    pass\n";
    assert_outline(
        Language::Python,
        py,
        &[
            "class Broken @ 1-7",
            "  method ok @ 2-3",
            "  method bad @ 4-5",
            "  method after @ 6-7",
            "function tail @ 9-10",
        ],
    );
    assert!(outline(Language::Python, py.as_bytes()).has_errors);
    assert!(!outline(Language::Rust, RUST.as_bytes()).has_errors);
}

#[test]
fn php_namespaces_classes_traits_and_methods() {
    let src = r#"<?php

namespace GuzzleHttp;

use Psr\Http\Message\RequestInterface;

interface MessageFormatterInterface
{
    public function format(RequestInterface $request): string;
}

trait Retries
{
    private function shouldRetry(int $n): bool
    {
        return $n < 3;
    }
}

final class HandlerStack
{
    use Retries;

    public static function create(?callable $handler = null): self
    {
        $stack = new self($handler ?: Utils::chooseHandler());
        $stack->push(Middleware::httpErrors(), 'http_errors');

        return $stack;
    }

    public function __invoke(RequestInterface $request, array $options)
    {
        return $this->resolve()($request, $options);
    }
}

enum Status: int
{
    case Ok = 200;
}

function choose_handler(): callable
{
    return Utils::chooseHandler();
}
"#;
    assert_outline(
        Language::Php,
        src,
        &[
            "namespace GuzzleHttp @ 3-3",
            "interface MessageFormatterInterface @ 7-10",
            "  method format @ 9-9",
            "trait Retries @ 12-18",
            "  method shouldRetry @ 14-17",
            "class HandlerStack @ 20-36",
            "  method create @ 24-30",
            "  method __invoke @ 32-35",
            "enum Status @ 38-41",
            "function choose_handler @ 43-46",
        ],
    );
    // The calls trace reads: a static call, a method call on `$this`, `new`.
    let uses = calls::name_uses(Language::Php, src.as_bytes(), &|| false);
    for (name, line) in [("chooseHandler", 26), ("push", 27), ("resolve", 34)] {
        assert!(
            uses.iter().any(|u| u.name == name && u.line == line),
            "{name}: {uses:?}"
        );
    }
}

#[test]
fn swift_types_extensions_protocols_and_initialisers() {
    let src = r#"import Foundation

public protocol ServerTrustEvaluating {
    func evaluate(_ trust: SecTrust, forHost host: String) throws
}

public final class PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    private let certificates: [SecCertificate]

    public init(certificates: [SecCertificate]) {
        self.certificates = certificates
    }

    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        try trust.af.performDefaultValidation(forHost: host)
    }
}

struct KeyEncoding {
    func encode(_ key: String) -> String {
        guard !isExcessive(key) else { return key }
        return convertToSnakeCase(key)
    }
}

enum Method: String {
    case get = "GET"
}

extension KeyEncoding {
    static func convertToSnakeCase(_ key: String) -> String {
        key.lowercased()
    }
}

typealias Handler = (Int) -> Void
"#;
    assert_outline(
        Language::Swift,
        src,
        &[
            "interface ServerTrustEvaluating @ 3-5",
            "  method evaluate @ 4-4",
            "class PinnedCertificatesTrustEvaluator @ 7-17",
            "  method init @ 10-12",
            "  method evaluate @ 14-16",
            "struct KeyEncoding @ 19-24",
            "  method encode @ 20-23",
            "enum Method @ 26-28",
            "impl KeyEncoding @ 30-34",
            "  method convertToSnakeCase @ 31-33",
            "type Handler @ 36-36",
        ],
    );
    let uses = calls::name_uses(Language::Swift, src.as_bytes(), &|| false);
    for (name, line) in [
        ("convertToSnakeCase", 22),
        ("isExcessive", 21),
        ("performDefaultValidation", 15),
    ] {
        assert!(
            uses.iter().any(|u| u.name == name && u.line == line),
            "{name}: {uses:?}"
        );
    }
}
