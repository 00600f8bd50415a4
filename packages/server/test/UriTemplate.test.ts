import { assert, describe, it } from "@effect/vitest"
import * as UriTemplate from "../src/internal/uriTemplate.ts"

// RFC 6570 section 3.2 variables.
const vars: UriTemplate.Variables = {
  count: ["one", "two", "three"],
  dom: ["example", "com"],
  dub: "me/too",
  hello: "Hello World!",
  half: "50%",
  var: "value",
  who: "fred",
  base: "http://example.com/home/",
  path: "/foo/bar",
  list: ["red", "green", "blue"],
  keys: { semi: ";", dot: ".", comma: "," },
  v: "6",
  x: "1024",
  y: "768",
  empty: "",
  empty_keys: {},
  undef: undefined
}

// [template, expansion] pairs from RFC 6570 sections 3.2.1 - 3.2.9 (levels 1-4).
const rfc: ReadonlyArray<readonly [string, string]> = [
  ["{count}", "one,two,three"],
  ["{count*}", "one,two,three"],
  ["{/count}", "/one,two,three"],
  ["{/count*}", "/one/two/three"],
  ["{;count}", ";count=one,two,three"],
  ["{;count*}", ";count=one;count=two;count=three"],
  ["{?count}", "?count=one,two,three"],
  ["{?count*}", "?count=one&count=two&count=three"],
  ["{&count*}", "&count=one&count=two&count=three"],
  ["{var}", "value"],
  ["{hello}", "Hello%20World%21"],
  ["{half}", "50%25"],
  ["O{empty}X", "OX"],
  ["O{undef}X", "OX"],
  ["{x,y}", "1024,768"],
  ["{x,hello,y}", "1024,Hello%20World%21,768"],
  ["?{x,empty}", "?1024,"],
  ["?{x,undef}", "?1024"],
  ["?{undef,y}", "?768"],
  ["{var:3}", "val"],
  ["{var:30}", "value"],
  ["{list}", "red,green,blue"],
  ["{list*}", "red,green,blue"],
  ["{keys}", "semi,%3B,dot,.,comma,%2C"],
  ["{keys*}", "semi=%3B,dot=.,comma=%2C"],
  ["{+var}", "value"],
  ["{+hello}", "Hello%20World!"],
  ["{+half}", "50%25"],
  ["{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"],
  ["{+base}index", "http://example.com/home/index"],
  ["O{+empty}X", "OX"],
  ["O{+undef}X", "OX"],
  ["{+path}/here", "/foo/bar/here"],
  ["here?ref={+path}", "here?ref=/foo/bar"],
  ["up{+path}{var}/here", "up/foo/barvalue/here"],
  ["{+x,hello,y}", "1024,Hello%20World!,768"],
  ["{+path,x}/here", "/foo/bar,1024/here"],
  ["{+path:6}/here", "/foo/b/here"],
  ["{+list}", "red,green,blue"],
  ["{+list*}", "red,green,blue"],
  ["{+keys}", "semi,;,dot,.,comma,,"],
  ["{+keys*}", "semi=;,dot=.,comma=,"],
  ["{#var}", "#value"],
  ["{#hello}", "#Hello%20World!"],
  ["{#half}", "#50%25"],
  ["foo{#empty}", "foo#"],
  ["foo{#undef}", "foo"],
  ["{#x,hello,y}", "#1024,Hello%20World!,768"],
  ["{#path,x}/here", "#/foo/bar,1024/here"],
  ["{#path:6}/here", "#/foo/b/here"],
  ["{#list}", "#red,green,blue"],
  ["{#list*}", "#red,green,blue"],
  ["{#keys}", "#semi,;,dot,.,comma,,"],
  ["{#keys*}", "#semi=;,dot=.,comma=,"],
  ["{.who}", ".fred"],
  ["{.who,who}", ".fred.fred"],
  ["{.half,who}", ".50%25.fred"],
  ["www{.dom*}", "www.example.com"],
  ["X{.var}", "X.value"],
  ["X{.empty}", "X."],
  ["X{.undef}", "X"],
  ["X{.var:3}", "X.val"],
  ["X{.list}", "X.red,green,blue"],
  ["X{.list*}", "X.red.green.blue"],
  ["X{.keys}", "X.semi,%3B,dot,.,comma,%2C"],
  ["X{.keys*}", "X.semi=%3B.dot=..comma=%2C"],
  ["X{.empty_keys}", "X"],
  ["X{.empty_keys*}", "X"],
  ["{/who}", "/fred"],
  ["{/who,who}", "/fred/fred"],
  ["{/half,who}", "/50%25/fred"],
  ["{/who,dub}", "/fred/me%2Ftoo"],
  ["{/var}", "/value"],
  ["{/var,empty}", "/value/"],
  ["{/var,undef}", "/value"],
  ["{/var,x}/here", "/value/1024/here"],
  ["{/var:1,var}", "/v/value"],
  ["{/list}", "/red,green,blue"],
  ["{/list*}", "/red/green/blue"],
  ["{/list*,path:4}", "/red/green/blue/%2Ffoo"],
  ["{/keys}", "/semi,%3B,dot,.,comma,%2C"],
  ["{/keys*}", "/semi=%3B/dot=./comma=%2C"],
  ["{;who}", ";who=fred"],
  ["{;half}", ";half=50%25"],
  ["{;empty}", ";empty"],
  ["{;hello:5}", ";hello=Hello"],
  ["{;v,empty,who}", ";v=6;empty;who=fred"],
  ["{;v,bar,who}", ";v=6;who=fred"],
  ["{;x,y}", ";x=1024;y=768"],
  ["{;x,y,empty}", ";x=1024;y=768;empty"],
  ["{;x,y,undef}", ";x=1024;y=768"],
  ["{;list}", ";list=red,green,blue"],
  ["{;list*}", ";list=red;list=green;list=blue"],
  ["{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"],
  ["{;keys*}", ";semi=%3B;dot=.;comma=%2C"],
  ["{?who}", "?who=fred"],
  ["{?half}", "?half=50%25"],
  ["{?x,y}", "?x=1024&y=768"],
  ["{?x,y,empty}", "?x=1024&y=768&empty="],
  ["{?x,y,undef}", "?x=1024&y=768"],
  ["{?var:3}", "?var=val"],
  ["{?list}", "?list=red,green,blue"],
  ["{?list*}", "?list=red&list=green&list=blue"],
  ["{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"],
  ["{?keys*}", "?semi=%3B&dot=.&comma=%2C"],
  ["{&who}", "&who=fred"],
  ["{&half}", "&half=50%25"],
  ["?fixed=yes{&x}", "?fixed=yes&x=1024"],
  ["{&x,y,empty}", "&x=1024&y=768&empty="],
  ["{&var:3}", "&var=val"],
  ["{&list}", "&list=red,green,blue"],
  ["{&list*}", "&list=red&list=green&list=blue"],
  ["{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"],
  ["{&keys*}", "&semi=%3B&dot=.&comma=%2C"]
]

describe("RFC 6570 expansion", () => {
  it("expands every example of RFC 6570 section 3.2", () => {
    for (const [template, expected] of rfc) {
      assert.strictEqual(UriTemplate.expand(template, vars), expected, template)
    }
    assert.isAbove(rfc.length, 110)
  })

  it("encodes non-ASCII as UTF-8 and keeps pct-triplets in reserved expansion", () => {
    assert.strictEqual(UriTemplate.expand("{x}", { x: "é€😀" }), "%C3%A9%E2%82%AC%F0%9F%98%80")
    assert.strictEqual(UriTemplate.expand("{+x}", { x: "a%20b%zz" }), "a%20b%25zz")
    assert.strictEqual(UriTemplate.expand("{x}", { x: "it's (ok)*" }), "it%27s%20%28ok%29%2A")
  })

  it("rejects malformed templates", () => {
    for (const bad of ["{", "}", "{}", "{a b}", "{x:0}", "{x:10000}", "{=x}", "{a}}"]) {
      assert.throws(() => UriTemplate.parse(bad), UriTemplate.TemplateError, undefined, bad)
    }
    assert.deepStrictEqual(UriTemplate.parse("a{b}{?c,d*}").variables, ["b", "c", "d"])
  })
})

describe("RFC 6570 matching", () => {
  const roundTrips: ReadonlyArray<readonly [string, UriTemplate.Variables]> = [
    ["test://template/{id}/data", { id: "42" }],
    ["test://template/{id}/data", { id: "a b/c?d" }],
    ["file:///{+path}", { path: "home/user/notes.txt" }],
    ["file:///{+path}.md", { path: "docs/a b/readme" }],
    [
      "repo://{owner}/{repo}/issues{?state,labels}",
      { owner: "effect", repo: "mcp", state: "open", labels: ["bug", "p1"] }
    ],
    ["repo://{owner}/{repo}/issues{?state,labels}", { owner: "effect", repo: "mcp" }],
    ["api{/segments*}", { segments: ["a", "b", "c"] }],
    ["api{/version,resource}", { version: "v1", resource: "users" }],
    ["find{?q*}", { q: { term: "x y", page: "2" } }],
    ["list{?ids*}", { ids: ["1", "2", "3"] }],
    ["list{;ids*}", { ids: ["1", "2"] }],
    ["map{;m}", { m: "a,b" }],
    ["host{.parts*}", { parts: ["www", "example", "com"] }],
    ["doc{#section}", { section: "intro/part 1" }],
    ["q{?x,y}{&z}", { x: "1", y: "2", z: "3" }],
    ["v{x}", { x: ["red", "green"] }],
    ["c{x,y}", { x: "1024", y: "768" }]
  ]

  it("recovers the variables of expansions", () => {
    for (const [template, variables] of roundTrips) {
      const uri = UriTemplate.expand(template, variables)
      const matched = UriTemplate.match(template, uri)
      const defined = Object.fromEntries(Object.entries(variables).filter(([, v]) => v !== undefined))
      assert.deepStrictEqual(matched, defined, `${template} ${uri}`)
    }
  })

  it("does not match URIs outside the template", () => {
    assert.isUndefined(UriTemplate.match("test://template/{id}/data", "test://template/1/other"))
    assert.isUndefined(UriTemplate.match("test://template/{id}/data", "test://template/a/b/data"))
    assert.isUndefined(UriTemplate.match("test://template/{id}/data", "other://template/1/data"))
    assert.isUndefined(UriTemplate.match("test://{id}", "test://bad%zzpct"))
  })

  it("matches the resource URIs MCP servers use", () => {
    assert.deepStrictEqual(UriTemplate.match("test://template/{id}/data", "test://template/123/data"), { id: "123" })
    assert.deepStrictEqual(UriTemplate.match("users://{userId}/profile", "users://u%2F1/profile"), { userId: "u/1" })
    assert.deepStrictEqual(UriTemplate.match("search{?q,limit}", "search?limit=5&q=cats"), { q: "cats", limit: "5" })
    assert.deepStrictEqual(UriTemplate.match("search{?q,limit}", "search"), {})
  })
})
