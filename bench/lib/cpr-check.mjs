/**
 * "Terminal replies still work": a cursor position request answered through the pty. bash prints
 * `ESC[6n` as the prompt of a silent `read` that ends at the reply's final `R`; the terminal replier
 * must answer `ESC[<row>;<col>R`, which the shell then echoes as numbers.
 */

/** The command typed: reads the reply into ROW/COL and prints them. */
export const CPR_COMMAND = `IFS=';' read -sdR -p $'\\e[6n' ROW COL; echo "row=\${ROW#*[} col=\${COL}"`;

const ANSWERED = /row=\d+ col=\d+/;

/** True when the send's result shows the reply's row and column. */
export function cprAnswered(result) {
  return result.waitReason === 'stdin_read' && ANSWERED.test(result.viewport);
}
