import { describe, expect, it } from "vitest";
import {
	addressRefusal,
	checkUrl,
	checkUrlResolved,
	createUrlChecker,
	type HostLookup,
	parseBrowserUrl,
	parseIpv6,
} from "./url-policy.js";

const cli = { allowPrivate: true };
const strict = { allowPrivate: false };

const fakeLookup =
	(table: Record<string, string[]>): HostLookup =>
	async (hostname) => {
		const addresses = table[hostname];
		if (!addresses) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
		return addresses;
	};

describe("url policy: cloud metadata is refused in every spelling", () => {
	const spellings = [
		"http://169.254.169.254/latest/meta-data/",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://METADATA.Google.Internal./",
		"http://169.254.0.1/",
		"http://169.254.255.255:8080/",
		"http://[fd00:ec2::254]/",
		"http://2852039166/",
		"http://0xa9fea9fe/",
		"http://0xA9.0xFE.0xA9.0xFE/",
		"http://0251.0376.0251.0376/",
		"http://169.254.43518/",
		"http://[::ffff:169.254.169.254]/",
		"http://[::ffff:a9fe:a9fe]/",
		"http://[0:0:0:0:0:ffff:169.254.169.254]/",
		"https://169.254.169.254./",
		"http://user:password@169.254.169.254/",
		"http://%31%36%39.254.169.254/",
	];
	for (const url of spellings) {
		it(`refuses ${url} even when private addresses are allowed`, () => {
			const verdict = checkUrl(url, cli);
			expect(verdict.allowed).toBe(false);
			if (!verdict.allowed) expect(verdict.reason).toMatch(/metadata/);
		});
	}

	it("refuses IPv6 forms that carry the metadata address (NAT64, 6to4) and IPv6 link-local", () => {
		expect(checkUrl("http://[64:ff9b::a9fe:a9fe]/", cli).allowed).toBe(false);
		expect(checkUrl("http://[2002:a9fe:a9fe::1]/", cli).allowed).toBe(false);
		expect(checkUrl("http://[fe80::1]/", cli).allowed).toBe(false);
	});

	it("refuses a host name that resolves into the link-local range, after DNS", async () => {
		const lookup = fakeLookup({
			"evil.example": ["93.184.216.34", "169.254.169.254"],
			"good.example": ["93.184.216.34"],
		});
		const evil = await checkUrlResolved("http://evil.example/", cli, lookup);
		expect(evil.allowed).toBe(false);
		if (!evil.allowed) expect(evil.reason).toContain("evil.example (which resolves to 169.254.169.254)");
		expect((await checkUrlResolved("http://good.example/", cli, lookup)).allowed).toBe(true);
		const mapped = fakeLookup({ "mapped.example": ["::ffff:169.254.169.254"] });
		expect((await checkUrlResolved("http://mapped.example/", cli, mapped)).allowed).toBe(false);
	});

	it("lets a name that does not resolve through (the browser cannot open it either)", async () => {
		expect((await checkUrlResolved("http://nowhere.invalid/", cli, fakeLookup({}))).allowed).toBe(true);
	});

	it("resolves each host once per session checker", async () => {
		let lookups = 0;
		const checker = createUrlChecker(cli, async () => {
			lookups += 1;
			return ["169.254.169.254"];
		});
		expect((await checker.check("http://rebind.example/a")).allowed).toBe(false);
		expect((await checker.check("http://rebind.example/b")).allowed).toBe(false);
		expect(lookups).toBe(1);
	});
});

describe("url policy: what is allowed", () => {
	const noDns = fakeLookup({ localhost: ["127.0.0.1", "::1"], "example.org": ["93.184.215.14"] });

	it("allows loopback, LAN and public hosts in a CLI session", async () => {
		for (const url of [
			"http://127.0.0.1:5173/",
			"http://localhost:3000/app",
			"https://example.org/",
			"http://192.168.0.10/",
			"http://[::1]:8080/",
		]) {
			expect((await checkUrlResolved(url, cli, noDns)).allowed, url).toBe(true);
		}
	});

	it("refuses loopback and LAN when private addresses are not allowed, but still allows public hosts", async () => {
		for (const url of [
			"http://127.0.0.1/",
			"http://0x7f.1/",
			"http://localhost/",
			"http://10.0.0.5/",
			"http://192.168.0.10/",
			"http://[::1]/",
			"http://[::ffff:127.0.0.1]/",
			"http://0/",
		]) {
			expect((await checkUrlResolved(url, strict, noDns)).allowed, url).toBe(false);
		}
		const resolvesLocal = fakeLookup({ "dev.example": ["10.1.2.3"] });
		expect((await checkUrlResolved("http://dev.example/", strict, resolvesLocal)).allowed).toBe(false);
		expect((await checkUrlResolved("https://example.org/", strict, noDns)).allowed).toBe(true);
	});

	it("accepts only http and https", () => {
		for (const url of ["file:///etc/passwd", "ftp://example.org/", "javascript:alert(1)", "data:text/html,hi"]) {
			expect(checkUrl(url, cli).allowed, url).toBe(false);
		}
	});
});

describe("url policy: refuseHosts", () => {
	const listed = { allowPrivate: true, refuseHosts: ["localhost", "127.0.0.2", "Internal.Example."] };

	it("refuses listed names and addresses in any case, with or without a trailing dot, in every session", () => {
		for (const url of [
			"http://localhost:8080/",
			"http://LOCALHOST./",
			"http://127.0.0.2/",
			"http://0x7f000002/",
			"http://internal.example/",
		]) {
			const verdict = checkUrl(url, listed);
			expect(verdict.allowed, url).toBe(false);
			if (!verdict.allowed) expect(verdict.reason).toContain("list of refused hosts");
		}
		expect(checkUrl("http://127.0.0.1/", listed).allowed).toBe(true);
		expect(checkUrl("http://localhost/", cli).allowed).toBe(true);
	});

	it("refuses a name that resolves to a listed address", async () => {
		const lookup = fakeLookup({ "dev.example": ["127.0.0.2"] });
		const verdict = await checkUrlResolved("http://dev.example/", listed, lookup);
		expect(verdict.allowed).toBe(false);
		if (!verdict.allowed) expect(verdict.reason).toContain("dev.example (which resolves to 127.0.0.2)");
	});
});

describe("url policy: onlyHosts", () => {
	it("refuses every other host before any DNS lookup, and still refuses metadata and listed hosts first", async () => {
		const options = { allowPrivate: true, onlyHosts: ["127.0.0.1", "localhost"], refuseHosts: ["localhost"] };
		let lookups = 0;
		const counting: HostLookup = async () => {
			lookups += 1;
			return ["93.184.215.14"];
		};
		expect((await checkUrlResolved("http://127.0.0.1:3000/", options, counting)).allowed).toBe(true);
		const other = await checkUrlResolved("https://update.googleapis.com/", options, counting);
		expect(other.allowed).toBe(false);
		if (!other.allowed) expect(other.reason).toContain("not on this session's list of hosts the browser may open");
		expect(checkUrl("http://localhost/", options)).toMatchObject({
			allowed: false,
			reason: expect.stringContaining("list of refused hosts"),
		});
		expect(checkUrl("http://0xa9fea9fe/", options)).toMatchObject({
			allowed: false,
			reason: expect.stringContaining("cloud-metadata"),
		});
		expect(lookups).toBe(0);
	});
});

describe("parseBrowserUrl", () => {
	it("adds https to a bare host name and http to a bare loopback or IP host", () => {
		expect(parseBrowserUrl("example.org/docs")).toEqual({ url: new URL("https://example.org/docs") });
		expect(parseBrowserUrl("localhost:5173")).toEqual({ url: new URL("http://localhost:5173/") });
		expect(parseBrowserUrl("127.0.0.1:8080/app")).toEqual({ url: new URL("http://127.0.0.1:8080/app") });
	});

	it("refuses other schemes with a reason", () => {
		for (const url of ["file:///etc/passwd", "javascript:alert(1)", "data:text/html,x", "about:blank", "ws://x/"]) {
			const parsed = parseBrowserUrl(url);
			expect("error" in parsed, url).toBe(true);
			if ("error" in parsed) expect(parsed.error).toMatch(/only http and https/);
		}
		expect("error" in parseBrowserUrl("")).toBe(true);
	});
});

describe("address parsing", () => {
	it("expands IPv6 with :: and a dotted tail", () => {
		expect(parseIpv6("::ffff:169.254.169.254")).toEqual([0, 0, 0, 0, 0, 0xffff, 0xa9fe, 0xa9fe]);
		expect(parseIpv6("[fd00:ec2::254]")).toEqual([0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254]);
		expect(parseIpv6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
		expect(parseIpv6("1::2::3")).toBeUndefined();
		expect(parseIpv6("example.org")).toBeUndefined();
	});

	it("checks addresses the resolver returns", () => {
		expect(addressRefusal("169.254.169.254", cli)).toMatch(/metadata/);
		expect(addressRefusal("fe80::1%eth0", cli)).toMatch(/link-local/);
		expect(addressRefusal("8.8.8.8", strict)).toBeUndefined();
		expect(addressRefusal("::ffff:8.8.8.8", strict)).toBeUndefined();
		expect(addressRefusal("fc00::1", strict)).toMatch(/private/);
		expect(addressRefusal("fc00::1", cli)).toBeUndefined();
	});
});
