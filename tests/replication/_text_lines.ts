/** Splits a text stream into lines (without their `\n` or `\r\n`). */
export class TextLineStream extends TransformStream<string, string> {
  constructor() {
    let buffer = "";
    super({
      transform(chunk, controller) {
        buffer += chunk;
        let newline = buffer.indexOf("\n");
        while (newline !== -1) {
          controller.enqueue(buffer.slice(0, newline).replace(/\r$/, ""));
          buffer = buffer.slice(newline + 1);
          newline = buffer.indexOf("\n");
        }
      },
      flush(controller) {
        if (buffer !== "") controller.enqueue(buffer);
      },
    });
  }
}
