/**
 * The file an upload to a stand-in Slack carries (the console's and the tests' fake): the body as sent, or the
 * file part of a multipart form, as @slack/web-api posts it, parsed by the platform's own FormData (undici).
 */
export async function uploadedFile(raw: Buffer, contentType: string | undefined): Promise<Buffer> {
  if (!contentType?.toLowerCase().startsWith("multipart/form-data")) return raw;
  try {
    const form = await new Response(new Uint8Array(raw), {
      headers: { "content-type": contentType },
    }).formData();
    for (const value of form.values())
      return typeof value === "string" ? Buffer.from(value, "utf8") : Buffer.from(await value.arrayBuffer());
    return raw;
  } catch {
    // Not a form after all: the body as sent.
    return raw;
  }
}
