import { createHash, randomBytes } from "node:crypto";
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import sharp from "sharp";
import type { ImageMime, ImageRef } from "../llm/types.js";
import { sniffImageType } from "./image-type.js";

/** Largest input accepted, in bytes (20 MiB), before anything is decoded. */
export const MAX_IMAGE_INPUT_BYTES = 20 * 1024 * 1024;
/** Long edge of a stored copy, in pixels, for detail "auto". */
export const MAX_LONG_EDGE = 1568;
/** Long edge of a stored copy, in pixels, for detail "low". */
export const LOW_DETAIL_LONG_EDGE = 768;
/** Largest stored copy in bytes: its base64 stays under the providers' 5 MB per-image limit. */
export const MAX_STORED_BYTES = Math.floor((5 * 1024 * 1024 * 3) / 4);
/** Images with more pixels than this are refused before they are decoded (a 20 MiB PNG can hold gigapixels). */
const MAX_INPUT_PIXELS = 100_000_000;

export type ImageDetail = "auto" | "low";

export interface StoreImageOptions {
	/** The attachment store: created 0700 if missing; stored copies are 0600 files named by their sha256. */
	directory: string;
	/** "low" downscales to 768 px on the long edge instead of 1,568. */
	detail?: ImageDetail;
}

export type AttachmentErrorCode =
	| "not_found"
	| "not_a_file"
	| "too_large"
	| "not_an_image"
	| "unreadable_image"
	| "store_failed";

/** Why an image was not stored: one line a person (or the model) can act on, and a code for the logs. */
export interface AttachmentError {
	error: string;
	code: AttachmentErrorCode;
}

const EXTENSIONS: Record<ImageMime, string> = {
	"image/png": "png",
	"image/jpeg": "jpg",
	"image/gif": "gif",
	"image/webp": "webp",
};

const kilobytes = (bytes: number) => Math.max(1, Math.round(bytes / 1024));
const mebibytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/** "<name> <W>×<H> <mime> (<N> KB)", the summary both the marker and view_image's answer use. */
export function imageSummary(ref: ImageRef): string {
	return `${ref.name} ${ref.width}×${ref.height} ${ref.mime} (${kilobytes(ref.bytes)} KB)`;
}

/** The text that stands for an image wherever it cannot be sent: "[image: shot.png 1280×800 image/png (210 KB)]". */
export function imageMarker(ref: ImageRef): string {
	return `[image: ${imageSummary(ref)}]`;
}

/**
 * True for paths that hold secrets and must never be attached or inlined: `.env*` files, private keys (id_rsa,
 * id_dsa, id_ecdsa, id_ed25519, *.pem, *.key, *.p12, *.pfx) and anything under a `.ssh` directory.
 * Looks at the path text only (no file system access).
 */
export function isSecretPath(path: string): boolean {
	const segments = path.split(/[\\/]+/).filter((segment) => segment !== "");
	const name = (segments.at(-1) ?? "").toLowerCase();
	if (segments.slice(0, -1).some((segment) => segment.toLowerCase() === ".ssh")) return true;
	if (name === ".ssh") return true;
	if (name.startsWith(".env")) return true;
	if (/^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/.test(name)) return true;
	return /\.(pem|key|p12|pfx)$/.test(name);
}

/**
 * Stores an image in the attachment store and returns its reference.
 * The type comes from the bytes' magic numbers (PNG, JPEG, GIF, WebP), never from `name`. Inputs over 20 MiB are
 * refused. The stored copy is downscaled to at most 1,568 px on the long edge (768 for detail "low"), never upscaled;
 * PNG, JPEG and WebP keep their type, a GIF that has to be re-encoded (animated, or too large) becomes its first frame
 * as PNG, and an image that needs no change is stored byte for byte. The copy is written to
 * `<directory>/<sha256 of stored bytes>.<ext>` (file 0600, directory 0700); `input.bytes` are never modified.
 * Contract: never throws; every failure is an AttachmentError.
 */
export async function storeImage(
	input: { bytes: Uint8Array; name: string },
	options: StoreImageOptions,
): Promise<ImageRef | AttachmentError> {
	const name = basename(input.name) || "image";
	return store(input.bytes, name, name, options);
}

/** storeImage with `label` naming the image in errors. */
async function store(
	bytes: Uint8Array,
	name: string,
	label: string,
	options: StoreImageOptions,
): Promise<ImageRef | AttachmentError> {
	if (bytes.length > MAX_IMAGE_INPUT_BYTES) return tooLarge(label, bytes.length);
	const mime = sniffImageType(bytes);
	if (!mime) {
		return {
			code: "not_an_image",
			error: `${label} is not an image snowpea can attach (PNG, JPEG, GIF or WebP, recognised by its contents)`,
		};
	}
	let prepared: Prepared;
	try {
		prepared = await prepare(bytes, mime, options.detail === "low" ? LOW_DETAIL_LONG_EDGE : MAX_LONG_EDGE);
	} catch (error) {
		return { code: "unreadable_image", error: `${label} could not be decoded as ${mime}: ${reason(error)}` };
	}
	if ("error" in prepared) return { code: "unreadable_image", error: `${label} ${prepared.error}` };
	try {
		const sha256 = createHash("sha256").update(prepared.bytes).digest("hex");
		const path = await writeStored(resolve(options.directory), sha256, EXTENSIONS[prepared.mime], prepared.bytes);
		return {
			name,
			mime: prepared.mime,
			bytes: prepared.bytes.length,
			sha256,
			path,
			width: prepared.width,
			height: prepared.height,
		};
	} catch (error) {
		return { code: "store_failed", error: `could not store ${label} in ${options.directory}: ${reason(error)}` };
	}
}

/**
 * Reads an image file and stores it with `storeImage`; the file itself is never rewritten.
 * Refuses a path that does not exist or is not a regular file, and a file over 20 MiB before reading it.
 * Errors name the file as `options.shownAs` (default: `path` as given).
 * Contract: never throws.
 */
export async function storeImageFile(
	path: string,
	options: StoreImageOptions & { shownAs?: string },
): Promise<ImageRef | AttachmentError> {
	const shown = options.shownAs ?? path;
	const info = await stat(path).catch(() => undefined);
	if (!info) return { code: "not_found", error: `${shown} does not exist` };
	if (!info.isFile()) {
		return {
			code: "not_a_file",
			error: info.isDirectory() ? `${shown} is a directory, not an image` : `${shown} is not a regular file`,
		};
	}
	if (info.size > MAX_IMAGE_INPUT_BYTES) return tooLarge(shown, info.size);
	let bytes: Buffer;
	try {
		bytes = await readFile(path);
	} catch (error) {
		return { code: "not_found", error: `${shown} could not be read: ${reason(error)}` };
	}
	return store(bytes, basename(path) || "image", shown, options);
}

function tooLarge(name: string, bytes: number): AttachmentError {
	return {
		code: "too_large",
		error: `${name} is ${mebibytes(bytes)} MiB; images over ${MAX_IMAGE_INPUT_BYTES / 1024 / 1024} MiB are refused (shrink or crop it first)`,
	};
}

type Prepared = { bytes: Uint8Array; mime: ImageMime; width: number; height: number } | { error: string };

/** The bytes to store: the input itself when it is already fit to send, else a downscaled re-encoding. */
async function prepare(bytes: Uint8Array, mime: ImageMime, longEdge: number): Promise<Prepared> {
	const metadata = await sharp(bytes, { limitInputPixels: false }).metadata();
	const oriented = metadata.autoOrient ?? { width: metadata.width, height: metadata.height };
	const { width, height } = oriented;
	if (!width || !height) return { error: "has no readable dimensions" };
	if (width * height > MAX_INPUT_PIXELS) {
		return {
			error: `is ${width}×${height} pixels; images over ${MAX_INPUT_PIXELS / 1_000_000} megapixels are refused`,
		};
	}
	const animated = (metadata.pages ?? 1) > 1;
	const rotated = metadata.orientation !== undefined && metadata.orientation !== 1;
	if (!animated && !rotated && Math.max(width, height) <= longEdge && bytes.length <= MAX_STORED_BYTES) {
		return { bytes, mime, width, height };
	}
	const output: ImageMime = mime === "image/gif" ? "image/png" : mime;
	// A copy that is still too large for the providers (noisy photographs) is shrunk further, a quarter at a time.
	let edge = Math.min(longEdge, Math.max(width, height));
	for (let attempt = 0; attempt < 8; attempt++) {
		const encoded = await encode(bytes, output, edge);
		if (encoded.bytes.length <= MAX_STORED_BYTES) return encoded;
		edge = Math.floor(edge * 0.75);
	}
	return { error: `stays over ${mebibytes(MAX_STORED_BYTES)} MiB even when downscaled` };
}

async function encode(
	bytes: Uint8Array,
	mime: ImageMime,
	edge: number,
): Promise<{ bytes: Uint8Array; mime: ImageMime; width: number; height: number }> {
	// first frame only (sharp's default), EXIF orientation applied, metadata dropped
	let pipeline = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS })
		.autoOrient()
		.resize({ width: edge, height: edge, fit: "inside", withoutEnlargement: true });
	if (mime === "image/jpeg") pipeline = pipeline.jpeg({ quality: 85 });
	else if (mime === "image/webp") pipeline = pipeline.webp({ quality: 85 });
	else pipeline = pipeline.png();
	const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
	return { bytes: data, mime, width: info.width, height: info.height };
}

/** Writes the stored copy once (content-addressed); an existing copy of the same size is kept. Returns its path. */
async function writeStored(directory: string, sha256: string, extension: string, bytes: Uint8Array): Promise<string> {
	await ensurePrivateDirectory(directory);
	const path = join(directory, `${sha256}.${extension}`);
	const existing = await stat(path).catch(() => undefined);
	if (existing?.isFile() && existing.size === bytes.length) {
		if ((existing.mode & 0o777) !== 0o600) await chmod(path, 0o600);
		return path;
	}
	const temporary = join(directory, `.${sha256}.${randomBytes(6).toString("hex")}.tmp`);
	try {
		await writeFile(temporary, bytes, { mode: 0o600 });
		await chmod(temporary, 0o600);
		await rename(temporary, path);
	} catch (error) {
		await rm(temporary, { force: true }).catch(() => undefined);
		throw error;
	}
	return path;
}

/** Creates `directory` 0700, or makes an existing one 0700; refuses one that another user owns. */
async function ensurePrivateDirectory(directory: string): Promise<void> {
	await mkdir(directory, { recursive: true, mode: 0o700 });
	const info = await stat(directory);
	if (!info.isDirectory()) throw new Error(`${directory} is not a directory`);
	const uid = process.getuid?.();
	if (uid !== undefined && info.uid !== uid) throw new Error(`${directory} belongs to another user`);
	if ((info.mode & 0o777) !== 0o700) await chmod(directory, 0o700);
}

function reason(error: unknown): string {
	const text = error instanceof Error ? error.message : String(error);
	return text.replace(/\s+/g, " ").trim();
}
