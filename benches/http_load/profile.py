"""Instructions per call from a callgrind dump of N calls: the total, the share of each
crate or library (self cost), and the inclusive cost of the named steps; with the cache
simulation on, the level-1 instruction and data cache misses per call, in all and by
crate or library. Usage: profile.py DUMP N"""
import collections
import sys

GROUPS = [
    ("dsh_mcp", "dsh-mcp"), ("dsh_runtime", "dsh-runtime"), ("dsh_json", "dsh-json"),
    ("rmcp", "rmcp"), ("hyper", "hyper"), ("axum", "axum"), ("tokio", "tokio"),
    ("serde_json", "serde_json"), ("serde", "serde"), ("http", "http"),
    ("malloc", "allocator"), ("free", "allocator"), ("realloc", "allocator"),
    ("memalign", "allocator"), ("__rdl_", "allocator"),
    ("memcpy", "memcpy/memmove/memset/memcmp"), ("memmove", "memcpy/memmove/memset/memcmp"),
    ("memset", "memcpy/memmove/memset/memcmp"), ("memcmp", "memcpy/memmove/memset/memcmp"),
    ("hash", "hashing"), ("Hash", "hashing"), ("sip::", "hashing"),
]
STEPS = [
    ("the whole request (our connection task)", "transport::http::accept::serve_connection::{{closure}}"),
    ("our steps before rmcp's service, and it", "transport::http::endpoint::credentials::{{closure}}"),
    ("reading the message as sent (wire::read)", "dsh_mcp::wire::read"),
    ("rmcp's Streamable HTTP service (handle_post)", "StreamableHttpService<S,M>::handle_post::{{closure}}"),
    ("rmcp's parse of the message", "<rmcp::model::JsonRpcMessage<Req,Resp,Noti> as serde_core::de::Deserialize>::deserialize"),
    ("rmcp's service loop for the request", "rmcp::service::serve_inner::{{closure}}"),
    ("the tools/call handler (ours: the registry pipeline)", "as rmcp::handler::server::ServerHandler>::call_tool::{{closure}}"),
    ("rmcp's tool router, built per request", "common::RmcpServer::tool_router"),
    ("the answer's rewrite (Outbound)", "dsh_mcp::wire::outbound::Outbound::line"),
    ("hyper's request parse", "<hyper::proto::h1::role::Server as hyper::proto::h1::Http1Transaction>::parse"),
]


def read(path):
    """Each function's own cost and the cost of its calls, per event."""
    own, calls = collections.defaultdict(collections.Counter), collections.Counter()
    events = ["Ir"]
    fn = cfn = None
    after_calls = False
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("fn="):
            fn = line[3:]
        elif line.startswith("cfn="):
            cfn = line[4:]
        elif line.startswith("calls="):
            after_calls = True
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            costs = [int(c) for c in line.split()[1:]]
            if after_calls:
                after_calls = False
                if cfn != fn:
                    calls[fn] += costs[0]
            else:
                for event, cost in zip(events, costs):
                    own[event][fn] += cost
    return own, calls


def by_group(costs):
    groups = collections.Counter()
    for name, cost in costs.items():
        groups[next((g for key, g in GROUPS if key in (name or "")), "other")] += cost
    return groups


def main():
    own, calls = read(sys.argv[1])
    n = int(sys.argv[2])
    print(f"total {sum(own['Ir'].values()) // n}")
    for group, cost in by_group(own["Ir"]).most_common():
        print(f"group {group}\t{cost // n}")
    for label, key in STEPS:
        matches = [own["Ir"][f] + calls[f] for f in set(own["Ir"]) | set(calls) if f and key in f]
        if matches:
            print(f"step {label}\t{max(matches) // n}")
    if "I1mr" in own:
        misses = own["D1mr"] + own["D1mw"]
        print(f"miss level-1 instruction cache misses, all\t{sum(own['I1mr'].values()) // n}")
        print(f"miss level-1 data cache misses, all\t{sum(misses.values()) // n}")
        for group, cost in by_group(own["I1mr"]).most_common():
            print(f"miss level-1 instruction cache misses: {group}\t{cost // n}")


if __name__ == "__main__":
    main()
