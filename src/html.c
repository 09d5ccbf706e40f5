#include "html.h"
void hm_write_html(FILE *f, const hm_report *r) { (void)f; (void)r; }
