/* Writing strings into JSON, YAML and HTML text.  */

#ifndef MEMPROF_ANALYSIS_EMIT_H
#define MEMPROF_ANALYSIS_EMIT_H

#include <stdio.h>

/* TEXT as a JSON string, quotes included.  */
void emit_json_string (FILE *out, const char *text);
/* TEXT as a YAML scalar: plain when that is safe, else double-quoted.  */
void emit_yaml_string (FILE *out, const char *text);
/* TEXT with &, <, >, " and ' escaped for HTML.  */
void emit_html_text (FILE *out, const char *text);

#endif /* MEMPROF_ANALYSIS_EMIT_H */
