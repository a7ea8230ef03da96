import { lookup } from "node:dns/promises";

// Which pages the browser tools may open. Pure checks on a parsed URL, plus one DNS step for host names.
// Hosts are normalized by the WHATWG URL parser first, so every IPv4 spelling (decimal, hex, octal, short forms,
// full-width digits, percent-encoding) arrives here as dotted decimal and every IPv6 one as compressed hex.

export interface UrlPolicyOptions {
	/** Loopback, private (LAN), CGNAT and other local addresses are allowed (CLI sessions: true). */
	allowPrivate: boolean;
	/**
	 * More hosts refused like cloud-metadata ones, in every session: names and IP addresses, matched as the URL parser
	 * spells a host or the resolver returns an address (case and trailing dots ignored). Tests use it to stand a
	 * loopback server in for the metadata service.
	 */
	refuseHosts?: readonly string[];
	/**
	 * When set, every host not on this list is refused too, before any DNS lookup (matched like `refuseHosts`). Tests
	 * use it to keep the browser, and Chromium's own background requests, on loopback.
	 */
	onlyHosts?: readonly string[];
}

/** The outcome of a check. A refusal's `reason` is one sentence naming the host. */
export type UrlVerdict = { allowed: true; url: string } | { allowed: false; url: string; host: string; reason: string };

/** Resolves a host name to its addresses; may reject (unknown host). */
export type HostLookup = (hostname: string) => Promise<string[]>;

/** Host names of cloud-metadata services, refused in every session whatever they resolve to. */
const METADATA_HOSTNAMES: ReadonlySet<string> = new Set([
	"metadata.google.internal",
	"metadata.goog",
	"metadata",
	"instance-data",
	"instance-data.ec2.internal",
]);

/** Cloud-metadata addresses outside 169.254.0.0/16: Alibaba (IPv4), AWS and GCP (IPv6). */
const METADATA_IPV4: ReadonlySet<number> = new Set([ipv4Number(100, 100, 100, 200)]);
const METADATA_IPV6: readonly string[] = ["fd00:ec2::254", "fd20:ce::254"];

/** IPv4 ranges a session without `allowPrivate` may not open: [first address, prefix length]. */
const PRIVATE_IPV4: readonly [number, number][] = [
	[ipv4Number(0, 0, 0, 0), 8], // "this network"; 0.0.0.0 reaches the local machine
	[ipv4Number(10, 0, 0, 0), 8],
	[ipv4Number(100, 64, 0, 0), 10], // CGNAT
	[ipv4Number(127, 0, 0, 0), 8],
	[ipv4Number(172, 16, 0, 0), 12],
	[ipv4Number(192, 0, 0, 0), 24],
	[ipv4Number(192, 168, 0, 0), 16],
	[ipv4Number(198, 18, 0, 0), 15],
	[ipv4Number(224, 0, 0, 0), 4], // multicast
	[ipv4Number(240, 0, 0, 0), 4], // reserved and broadcast
];

function ipv4Number(a: number, b: number, c: number, d: number): number {
	return ((a << 24) >>> 0) + (b << 16) + (c << 8) + d;
}

function inIpv4Range(address: number, [first, prefix]: [number, number]): boolean {
	const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
	return (address & mask) >>> 0 === (first & mask) >>> 0;
}

/** A dotted-decimal IPv4 address as a number; undefined for anything else (only the canonical form is accepted). */
export function parseIpv4(text: string): number | undefined {
	const parts = text.split(".");
	if (parts.length !== 4) return undefined;
	let value = 0;
	for (const part of parts) {
		if (!/^\d{1,3}$/.test(part)) return undefined;
		const octet = Number(part);
		if (octet > 255) return undefined;
		value = value * 256 + octet;
	}
	return value;
}

/**
 * An IPv6 address as eight 16-bit groups; undefined when it is not one. Accepts brackets, "::", a dotted IPv4 tail
 * and a zone ("%eth0", ignored).
 */
export function parseIpv6(text: string): number[] | undefined {
	let body = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
	const zone = body.indexOf("%");
	if (zone !== -1) body = body.slice(0, zone);
	if (!body.includes(":")) return undefined;
	const lastColon = body.lastIndexOf(":");
	const last = body.slice(lastColon + 1);
	if (last.includes(".")) {
		const v4 = parseIpv4(last);
		if (v4 === undefined) return undefined;
		body = `${body.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
	}
	const halves = body.split("::");
	if (halves.length > 2) return undefined;
	const parseGroups = (part: string): number[] | undefined => {
		if (part === "") return [];
		const groups: number[] = [];
		for (const group of part.split(":")) {
			if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
			groups.push(Number.parseInt(group, 16));
		}
		return groups;
	};
	const head = parseGroups(halves[0] ?? "");
	const rest = halves.length === 2 ? parseGroups(halves[1] ?? "") : [];
	if (!head || !rest) return undefined;
	const known = head.length + rest.length;
	if (halves.length === 1) return known === 8 ? head : undefined;
	if (known > 7) return undefined;
	return [...head, ...new Array<number>(8 - known).fill(0), ...rest];
}

/** The IPv4 address an IPv6 address carries (mapped, compatible, translated, NAT64, 6to4, Teredo), if any. */
function embeddedIpv4(groups: number[]): number | undefined {
	const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
	const low = ((g6 << 16) >>> 0) + g7;
	const zeroUpTo = (count: number) => groups.slice(0, count).every((group) => group === 0);
	if (zeroUpTo(5) && g5 === 0xffff) return low; // ::ffff:a.b.c.d (mapped)
	if (zeroUpTo(4) && g4 === 0xffff && g5 === 0) return low; // ::ffff:0:a.b.c.d (translated)
	if (zeroUpTo(6) && low > 1) return low; // ::a.b.c.d (compatible, deprecated)
	if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return low; // NAT64
	if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return low; // local-use NAT64 64:ff9b:1::/48
	if (g0 === 0x2002) return ((g1 << 16) >>> 0) + g2; // 6to4
	if (g0 === 0x2001 && g1 === 0) return (~low >>> 0) >>> 0; // Teredo: the client address, inverted
	return undefined;
}

/** Why an IPv4 address is refused, or undefined when it is allowed. */
function ipv4Refusal(address: number, shown: string, options: UrlPolicyOptions): string | undefined {
	if (inIpv4Range(address, [ipv4Number(169, 254, 0, 0), 16]) || METADATA_IPV4.has(address)) {
		return `${shown} is a cloud-metadata address; the browser never opens it`;
	}
	if (!options.allowPrivate && PRIVATE_IPV4.some((range) => inIpv4Range(address, range))) {
		return `${shown} is a private, loopback or local address; this session may not open it`;
	}
	return undefined;
}

/** Why an IPv6 address is refused, or undefined when it is allowed. */
function ipv6Refusal(groups: number[], shown: string, options: UrlPolicyOptions): string | undefined {
	const same = (other: string) => {
		const parsed = parseIpv6(other);
		return parsed?.every((group, index) => group === groups[index]) ?? false;
	};
	const [g0 = 0] = groups;
	if (METADATA_IPV6.some(same) || (g0 & 0xffc0) === 0xfe80) {
		return `${shown} is a cloud-metadata or link-local address; the browser never opens it`;
	}
	const v4 = embeddedIpv4(groups);
	if (v4 !== undefined) {
		const reason = ipv4Refusal(v4, shown, options);
		if (reason) return reason;
	}
	if (!options.allowPrivate) {
		const unspecifiedOrLoopback = groups.slice(0, 7).every((group) => group === 0) && (groups[7] ?? 0) <= 1;
		const local = (g0 & 0xfe00) === 0xfc00 || (g0 & 0xffc0) === 0xfec0 || (g0 & 0xff00) === 0xff00;
		if (unspecifiedOrLoopback || local) {
			return `${shown} is a private, loopback or local address; this session may not open it`;
		}
	}
	return undefined;
}

/** The form `refuseHosts` entries and hosts are compared in: lower case, no brackets, no trailing dots. */
function hostKey(host: string): string {
	const lower = host.toLowerCase().replace(/\.+$/, "");
	return lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
}

/** Why a host or address is refused by `refuseHosts`, or undefined. */
function listedRefusal(host: string, options: UrlPolicyOptions, shown: string): string | undefined {
	if (!options.refuseHosts?.length) return undefined;
	const key = hostKey(host);
	return options.refuseHosts.some((listed) => hostKey(listed) === key)
		? `${shown} is on this session's list of refused hosts; the browser never opens it`
		: undefined;
}

/**
 * Why an IP address (dotted IPv4 or IPv6, with or without brackets) is refused; undefined when it is allowed or is
 * not an IP address. Pure.
 */
export function addressRefusal(address: string, options: UrlPolicyOptions, shown = address): string | undefined {
	const listed = listedRefusal(address, options, shown);
	if (listed) return listed;
	const v4 = parseIpv4(address);
	if (v4 !== undefined) return ipv4Refusal(v4, shown, options);
	const v6 = parseIpv6(address);
	if (v6 !== undefined) return ipv6Refusal(v6, shown, options);
	return undefined;
}

/** True when `hostname` (as the URL parser gives it) is an IP literal rather than a name to resolve. */
export function isIpLiteral(hostname: string): boolean {
	return parseIpv4(hostname) !== undefined || parseIpv6(hostname) !== undefined;
}

/** Why a host (a URL's `hostname`) is refused before any DNS lookup; undefined when allowed so far. Pure. */
export function hostRefusal(hostname: string, options: UrlPolicyOptions): string | undefined {
	const name = hostname.toLowerCase().replace(/\.+$/, "");
	if (METADATA_HOSTNAMES.has(name)) return `${name} is a cloud-metadata address; the browser never opens it`;
	const listed = listedRefusal(name, options, name);
	if (listed) return listed;
	const byAddress = addressRefusal(name, options);
	if (byAddress) return byAddress;
	if (!options.allowPrivate && (name === "localhost" || name.endsWith(".localhost") || name.endsWith(".local"))) {
		return `${name} is a loopback or local name; this session may not open it`;
	}
	if (options.onlyHosts && !options.onlyHosts.some((host) => hostKey(host) === hostKey(name))) {
		return `${name} is not on this session's list of hosts the browser may open`;
	}
	return undefined;
}

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;
const NON_WEB_SCHEMES =
	/^(file|data|javascript|vbscript|about|blob|chrome|chrome-extension|view-source|ftp|ws|wss|mailto|tel):/i;

/**
 * The URL the model asked for, made absolute: "example.org/x" becomes https://example.org/x, and a bare loopback or IP
 * host ("localhost:5173", "127.0.0.1:8080/app") becomes http://. Only http and https are accepted. Pure.
 */
export function parseBrowserUrl(input: string): { url: URL } | { error: string } {
	const text = input.trim();
	if (text === "") return { error: "the url is empty" };
	let absolute = text;
	if (NON_WEB_SCHEMES.test(text)) {
		return { error: `only http and https pages can be opened, not ${text.slice(0, text.indexOf(":") + 1)} urls` };
	}
	if (!text.includes("://")) {
		const host = text.replace(/^\/\//, "").split(/[/?#]/)[0] ?? "";
		const hostname = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : (host.split(":")[0] ?? "");
		const local = /^localhost$/i.test(hostname) || isIpLiteral(hostname) || hostname.endsWith(".localhost");
		absolute = `${local ? "http" : "https"}://${text.replace(/^\/\//, "")}`;
	} else if (!SCHEME.test(text)) {
		return { error: `${text} is not a url` };
	}
	let url: URL;
	try {
		url = new URL(absolute);
	} catch {
		return { error: `${text} is not a valid url` };
	}
	if (url.protocol !== "http:" && url.protocol !== "https:") {
		return { error: `only http and https pages can be opened, not ${url.protocol} urls` };
	}
	return { url };
}

/**
 * The policy's verdict on an absolute URL without any DNS lookup: http and https only; cloud-metadata hosts and
 * addresses always refused; local and private ones refused unless `allowPrivate`. Pure.
 */
export function checkUrl(input: string, options: UrlPolicyOptions): UrlVerdict {
	let url: URL;
	try {
		url = new URL(input);
	} catch {
		return { allowed: false, url: input, host: input, reason: `${input} is not a valid url` };
	}
	if (url.protocol !== "http:" && url.protocol !== "https:") {
		return {
			allowed: false,
			url: url.href,
			host: url.hostname,
			reason: `only http and https pages can be opened, not ${url.protocol} urls`,
		};
	}
	const reason = hostRefusal(url.hostname, options);
	return reason ? { allowed: false, url: url.href, host: url.hostname, reason } : { allowed: true, url: url.href };
}

/** How long the DNS step waits before it lets the browser try the name itself. */
const LOOKUP_TIMEOUT_MS = 5_000;

/** Every address a name resolves to, through the system resolver (what Chromium uses on Linux). */
export const systemLookup: HostLookup = async (hostname) =>
	(await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** The addresses `hostname` resolves to; empty when it does not resolve within 5 s. Never rejects. */
export async function lookupAddresses(hostname: string, resolve: HostLookup = systemLookup): Promise<string[]> {
	let timer: NodeJS.Timeout | undefined;
	const timeout = new Promise<string[]>((resolvePromise) => {
		timer = setTimeout(() => resolvePromise([]), LOOKUP_TIMEOUT_MS);
	});
	return Promise.race([resolve(hostname).catch(() => [] as string[]), timeout]).finally(() => clearTimeout(timer));
}

/**
 * The verdict for `hostname` after resolving it: refused when any of its addresses is refused. A name that does not
 * resolve (or not within 5 s) is allowed: the browser cannot open it either. DNS rebinding is not covered.
 * Never rejects.
 */
export async function resolvedHostRefusal(
	hostname: string,
	options: UrlPolicyOptions,
	resolve: HostLookup = systemLookup,
): Promise<string | undefined> {
	if (isIpLiteral(hostname)) return undefined;
	const name = hostname.replace(/\.+$/, "");
	const addresses = await lookupAddresses(name, resolve);
	for (const address of addresses) {
		const reason = addressRefusal(address, options, `${name} (which resolves to ${address})`);
		if (reason) return reason;
	}
	return undefined;
}

/**
 * The full check: `checkUrl`, then the DNS step for host names. Never rejects.
 */
export async function checkUrlResolved(
	input: string,
	options: UrlPolicyOptions,
	resolve: HostLookup = systemLookup,
): Promise<UrlVerdict> {
	const verdict = checkUrl(input, options);
	if (!verdict.allowed) return verdict;
	const host = new URL(verdict.url).hostname;
	const reason = await resolvedHostRefusal(host, options, resolve);
	return reason ? { allowed: false, url: verdict.url, host, reason } : verdict;
}

/**
 * A checker for one browser session: `checkUrlResolved` with each host's DNS verdict kept for the session (names are
 * resolved once). `check` never rejects.
 */
export function createUrlChecker(
	options: UrlPolicyOptions,
	resolve: HostLookup = systemLookup,
): { check(url: string): Promise<UrlVerdict> } {
	const verdicts = new Map<string, Promise<string | undefined>>();
	return {
		async check(url) {
			const verdict = checkUrl(url, options);
			if (!verdict.allowed) return verdict;
			const host = new URL(verdict.url).hostname;
			let pending = verdicts.get(host);
			if (!pending) {
				if (verdicts.size >= 1_000) verdicts.clear();
				pending = resolvedHostRefusal(host, options, resolve);
				verdicts.set(host, pending);
			}
			const reason = await pending;
			return reason ? { allowed: false, url: verdict.url, host, reason } : verdict;
		},
	};
}
