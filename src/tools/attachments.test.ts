import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ImageRef } from "../llm/types.js";
import {
	type AttachmentError,
	imageMarker,
	isSecretPath,
	MAX_IMAGE_INPUT_BYTES,
	storeImage,
	storeImageFile,
} from "./attachments.js";

let root: string;
let store: string;

beforeEach(() => {
	root = mkdtempSync(join(tmpdir(), "snowpea-attachments-test-"));
	store = join(root, "store");
});
afterEach(() => {
	rmSync(root, { recursive: true, force: true });
});

const png = (width: number, height: number) =>
	sharp({ create: { width, height, channels: 3, background: { r: 40, g: 120, b: 200 } } })
		.png()
		.toBuffer();

function stored(result: ImageRef | AttachmentError): ImageRef {
	if ("error" in result) throw new Error(`expected an image, got: ${result.error}`);
	return result;
}

function refused(result: ImageRef | AttachmentError): AttachmentError {
	if (!("error" in result)) throw new Error(`expected an error, got ${result.path}`);
	return result;
}

describe("storeImage", () => {
	it("sniffs the type from the bytes, not the name: a PNG named .jpg is image/png", async () => {
		const ref = stored(
			await storeImage({ bytes: await png(20, 10), name: "/somewhere/photo.jpg" }, { directory: store }),
		);
		expect(ref.mime).toBe("image/png");
		expect(ref.name).toBe("photo.jpg");
		expect(ref.path).toBe(join(store, `${ref.sha256}.png`));
		expect(ref.path.endsWith(".jpg")).toBe(false);
	});

	it("refuses a text file named .png with a one-line error and stores nothing", async () => {
		const error = refused(
			await storeImage({ bytes: Buffer.from("hello, I am text\n"), name: "fake.png" }, { directory: store }),
		);
		expect(error.code).toBe("not_an_image");
		expect(error.error).toMatch(/^fake\.png is not an image/);
		expect(error.error).not.toContain("\n");
	});

	it("refuses input over 20 MiB before decoding it", async () => {
		const bytes = new Uint8Array(MAX_IMAGE_INPUT_BYTES + 1);
		bytes.set(await png(4, 4));
		const error = refused(await storeImage({ bytes, name: "huge.png" }, { directory: store }));
		expect(error.code).toBe("too_large");
		expect(error.error).toBe("huge.png is 20.0 MiB; images over 20 MiB are refused (shrink or crop it first)");
	});

	it("downscales a 4000×3000 PNG to 1568×1176, and to 768×576 for detail low", async () => {
		const bytes = await png(4000, 3000);
		const ref = stored(await storeImage({ bytes, name: "big.png" }, { directory: store }));
		expect([ref.width, ref.height]).toEqual([1568, 1176]);
		const onDisk = await sharp(readFileSync(ref.path)).metadata();
		expect([onDisk.format, onDisk.width, onDisk.height]).toEqual(["png", 1568, 1176]);
		expect(ref.bytes).toBe(statSync(ref.path).size);
		expect(ref.sha256).toBe(createHash("sha256").update(readFileSync(ref.path)).digest("hex"));

		const low = stored(await storeImage({ bytes, name: "big.png" }, { directory: store, detail: "low" }));
		expect([low.width, low.height]).toEqual([768, 576]);
		expect(low.path).not.toBe(ref.path);
	});

	it("never upscales: a small image keeps its size and its bytes", async () => {
		const bytes = await png(300, 200);
		const ref = stored(await storeImage({ bytes, name: "small.png" }, { directory: store, detail: "low" }));
		expect([ref.width, ref.height]).toEqual([300, 200]);
		expect(Buffer.compare(readFileSync(ref.path), bytes)).toBe(0);
	});

	it("keeps JPEG and WebP as their own type when it downscales them", async () => {
		const base = sharp({ create: { width: 2000, height: 1000, channels: 3, background: "#808080" } });
		const jpeg = stored(
			await storeImage({ bytes: await base.clone().jpeg().toBuffer(), name: "a" }, { directory: store }),
		);
		const webp = stored(
			await storeImage({ bytes: await base.clone().webp().toBuffer(), name: "b" }, { directory: store }),
		);
		expect([jpeg.mime, jpeg.width, jpeg.height, basename(jpeg.path).split(".")[1]]).toEqual([
			"image/jpeg",
			1568,
			784,
			"jpg",
		]);
		expect([webp.mime, webp.width, webp.height]).toEqual(["image/webp", 1568, 784]);
		expect((await sharp(readFileSync(webp.path)).metadata()).format).toBe("webp");
	});

	it("stores an animated GIF as its first frame, in PNG", async () => {
		const width = 8;
		const height = 6;
		const frames = Buffer.alloc(width * height * 2 * 3);
		for (let pixel = 0; pixel < width * height * 2; pixel++) {
			const first = pixel < width * height;
			frames.set(first ? [255, 0, 0] : [0, 0, 255], pixel * 3);
		}
		const gif = await sharp(frames, { raw: { width, height: height * 2, channels: 3, pageHeight: height } })
			.gif()
			.toBuffer();
		expect((await sharp(gif).metadata()).pages).toBe(2);

		const ref = stored(await storeImage({ bytes: gif, name: "anim.gif" }, { directory: store }));
		expect([ref.mime, ref.width, ref.height]).toEqual(["image/png", width, height]);
		expect(ref.path.endsWith(".png")).toBe(true);
		const { data } = await sharp(readFileSync(ref.path)).raw().toBuffer({ resolveWithObject: true });
		expect([data[0], data[1], data[2]]).toEqual([255, 0, 0]);
	});

	it("writes a 0600 file in a 0700 directory, named by its content, once", async () => {
		const bytes = await png(10, 10);
		const first = stored(await storeImage({ bytes, name: "one.png" }, { directory: store }));
		const second = stored(await storeImage({ bytes, name: "two.png" }, { directory: store }));
		expect(statSync(store).mode & 0o777).toBe(0o700);
		expect(statSync(first.path).mode & 0o777).toBe(0o600);
		expect(second.path).toBe(first.path);
		expect(second.name).toBe("two.png");
	});

	it("tightens an existing directory to 0700", async () => {
		mkdirSync(store, { mode: 0o755 });
		stored(await storeImage({ bytes: await png(4, 4), name: "x.png" }, { directory: store }));
		expect(statSync(store).mode & 0o777).toBe(0o700);
	});

	it("reports bytes that only look like an image as unreadable", async () => {
		const bytes = Buffer.concat([(await png(4, 4)).subarray(0, 16), Buffer.alloc(32)]);
		const error = refused(await storeImage({ bytes, name: "broken.png" }, { directory: store }));
		expect(error.code).toBe("unreadable_image");
		expect(error.error).toMatch(/^broken\.png could not be decoded as image\/png/);
	});
});

describe("storeImageFile", () => {
	it("stores a file and leaves the original byte for byte unchanged", async () => {
		const path = join(root, "shot.png");
		const bytes = await png(3000, 1000);
		writeFileSync(path, bytes);
		const ref = stored(await storeImageFile(path, { directory: store }));
		expect([ref.name, ref.width, ref.height]).toEqual(["shot.png", 1568, 523]);
		expect(Buffer.compare(readFileSync(path), bytes)).toBe(0);
		expect(ref.path.startsWith(store)).toBe(true);
	});

	it("refuses what is not a regular file, and names it as shown", async () => {
		expect(refused(await storeImageFile(join(root, "nope.png"), { directory: store, shownAs: "nope.png" }))).toEqual({
			code: "not_found",
			error: "nope.png does not exist",
		});
		const directory = refused(await storeImageFile(root, { directory: store }));
		expect(directory.code).toBe("not_a_file");
		const text = join(root, "notes.png");
		writeFileSync(text, "just text");
		const error = refused(await storeImageFile(text, { directory: store, shownAs: "notes.png" }));
		expect(error.code).toBe("not_an_image");
		expect(error.error).toMatch(/^notes\.png is not an image/);
	});

	it("refuses a file over 20 MiB from its size", async () => {
		const path = join(root, "huge.png");
		writeFileSync(path, Buffer.alloc(MAX_IMAGE_INPUT_BYTES + 1024));
		const error = refused(await storeImageFile(path, { directory: store, shownAs: "huge.png" }));
		expect(error.code).toBe("too_large");
		expect(error.error).toMatch(/^huge\.png is 20\.0 MiB; images over 20 MiB are refused/);
	});
});

describe("imageMarker", () => {
	it("names the image, its size, type and kilobytes", () => {
		const ref: ImageRef = {
			name: "shot.png",
			mime: "image/png",
			bytes: 215_040,
			sha256: "0".repeat(64),
			path: "/store/x.png",
			width: 1280,
			height: 800,
		};
		expect(imageMarker(ref)).toBe("[image: shot.png 1280×800 image/png (210 KB)]");
	});
});

describe("isSecretPath", () => {
	it("flags env files, private keys and anything under .ssh", () => {
		for (const path of [
			".env",
			"app/.env.local",
			"/home/me/.env.production",
			"/home/me/.ssh/id_rsa",
			"keys/id_ed25519",
			"id_ecdsa",
			"/home/me/.ssh/config",
			"/home/me/.ssh/known_hosts",
			"certs/server.pem",
			"tls/private.key",
			"C:\\Users\\me\\.ssh\\id_rsa",
		]) {
			expect(isSecretPath(path), path).toBe(true);
		}
	});

	it("lets ordinary files through", () => {
		for (const path of [
			"screenshot.png",
			"src/environment.ts",
			"docs/ssh.md",
			"keyboard.png",
			"id_rsa_notes.txt",
			"env/x.png",
		]) {
			expect(isSecretPath(path), path).toBe(false);
		}
	});
});
