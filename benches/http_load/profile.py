"""Instructions per call from a callgrind dump of N calls: the total, the share of each
crate or library (self cost), and the inclusive cost of the named steps.
Usage: profile.py DUMP N"""
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
    own, calls = collections.Counter(), collections.Counter()
    fn = cfn = None
    after_calls = False
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("fn="):
            fn = line[3:]
        elif line.startswith("cfn="):
            cfn = line[4:]
        elif line.startswith("calls="):
            after_calls = True
        elif line and (line[0].isdigit() or line[0] in "+-*"):
            cost = int(line.split()[1])
            if after_calls:
                after_calls = False
                if cfn != fn:
                    calls[fn] += cost
            else:
                own[fn] += cost
    return own, calls


def main():
    own, calls = read(sys.argv[1])
    n = int(sys.argv[2])
    total = sum(own.values())
    print(f"total {total // n}")
    groups = collections.Counter()
    for name, cost in own.items():
        group = next((g for key, g in GROUPS if key in name), "other")
        groups[group] += cost
    for group, cost in groups.most_common():
        print(f"group {group}\t{cost // n}")
    for label, key in STEPS:
        matches = [own[f] + calls[f] for f in set(own) | set(calls) if f and key in f]
        if matches:
            print(f"step {label}\t{max(matches) // n}")


if __name__ == "__main__":
    main()
