/*
 * expr.c - lexer and parser of the metric expression language.
 *
 * The language is the subset of Python expressions that metric formulas
 * use: numbers, counters (SQ_WAVES, TCC_HIT[3], TCC_HIT[ch]), variables
 * ($max_sclk, $denom), arithmetic, comparisons, `and`/`or`/`not`, the
 * conditional `a if c else b`, None, and calls (AVG, MIN, ...). Binary
 * operators are parsed by precedence climbing over a table of binding
 * powers, with Python's precedences, so formulas copied from the reference
 * tool mean the same thing here.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

typedef enum tok_kind {
  T_END, T_NUM, T_NAME, T_VAR, T_STRING, T_OP, T_LPAREN, T_RPAREN,
  T_LBRACK, T_RBRACK, T_COMMA
} tok_kind;

typedef struct token {
  tok_kind kind;
  int32_t pos;
  const char *start;
  size_t len;
  double num;
  char op; /* for T_OP: the operator code, see lm_expr_kind */
} token;

typedef struct parser {
  const char *text;
  const char *p;
  token tok;
  lm_arena *arena;
  lm_diag *diag;
  lm_status status;
  int depth;
} parser;

#define MAX_DEPTH 200

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static lm_status fail(parser *ps, int32_t pos, const char *fmt, ...) {
  if (ps->status != LM_OK) return ps->status;
  char message[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  ps->status = lm_diag_set(ps->diag, LM_EPARSE, NULL, 0, pos + 1, NULL, "%s", message);
  return ps->status;
}

static void *nomem(parser *ps) {
  if (ps->status == LM_OK) ps->status = lm_oom(ps->diag, NULL);
  return NULL;
}

static int is_name_start(int c) { return isalpha(c) || c == '_'; }
static int is_name_char(int c) { return isalnum(c) || c == '_'; }

static void next(parser *ps) {
  const char *p = ps->p;
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
  token *t = &ps->tok;
  t->start = p;
  t->pos = (int32_t)(p - ps->text);
  t->len = 1;
  if (!*p) {
    t->kind = T_END;
    t->len = 0;
    ps->p = p;
    return;
  }
  if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
    char *end;
    t->kind = T_NUM;
    t->num = strtod(p, &end);
    /* strtod would take hex and "inf"; numbers here are decimal only. */
    const char *q = p;
    while (isdigit((unsigned char)*q) || *q == '.') q++;
    if ((*q == 'e' || *q == 'E') &&
        (isdigit((unsigned char)q[1]) ||
         ((q[1] == '+' || q[1] == '-') && isdigit((unsigned char)q[2])))) {
      q += 2;
      while (isdigit((unsigned char)*q)) q++;
    }
    if (end != q || is_name_char((unsigned char)*q)) {
      t->kind = T_END;
      fail(ps, t->pos, "malformed number");
      return;
    }
    t->len = (size_t)(q - p);
    ps->p = q;
    return;
  }
  if (*p == '$') {
    const char *q = p + 1;
    if (!is_name_start((unsigned char)*q)) {
      t->kind = T_END;
      fail(ps, t->pos, "expected a variable name after '$'");
      return;
    }
    while (is_name_char((unsigned char)*q)) q++;
    t->kind = T_VAR;
    t->start = p + 1;
    t->len = (size_t)(q - p - 1);
    ps->p = q;
    return;
  }
  if (is_name_start((unsigned char)*p)) {
    const char *q = p;
    /* A dot followed by a letter continues a name: CUPTI metric names
     * (dram__bytes_read.sum, sm__throughput.avg.pct_of_peak_sustained_elapsed). */
    while (is_name_char((unsigned char)*q) || (*q == '.' && is_name_start((unsigned char)q[1])))
      q++;
    t->kind = T_NAME;
    t->len = (size_t)(q - p);
    ps->p = q;
    /* Keyword operators. */
    if (t->len == 3 && memcmp(p, "and", 3) == 0) t->kind = T_OP, t->op = '&';
    else if (t->len == 2 && memcmp(p, "or", 2) == 0) t->kind = T_OP, t->op = '|';
    else if (t->len == 3 && memcmp(p, "not", 3) == 0) t->kind = T_OP, t->op = 'n';
    return;
  }
  if (*p == '\'' || *p == '"') {
    char quote = *p;
    const char *q = p + 1;
    while (*q && *q != quote) q++;
    if (!*q) {
      t->kind = T_END;
      fail(ps, t->pos, "unterminated string");
      return;
    }
    t->kind = T_STRING;
    t->start = p + 1;
    t->len = (size_t)(q - p - 1);
    ps->p = q + 1;
    return;
  }
  ps->p = p + 1;
  switch (*p) {
  case '(': t->kind = T_LPAREN; return;
  case ')': t->kind = T_RPAREN; return;
  case '[': t->kind = T_LBRACK; return;
  case ']': t->kind = T_RBRACK; return;
  case ',': t->kind = T_COMMA; return;
  case '+': case '-': case '%':
    t->kind = T_OP;
    t->op = *p;
    return;
  case '*':
    t->kind = T_OP;
    t->op = '*';
    if (p[1] == '*') t->op = 'p', t->len = 2, ps->p = p + 2;
    return;
  case '/':
    t->kind = T_OP;
    t->op = '/';
    if (p[1] == '/') {
      t->kind = T_END;
      fail(ps, t->pos, "floor division '//' is not supported");
    }
    return;
  case '=': case '!': case '<': case '>':
    t->kind = T_OP;
    if (p[1] == '=') {
      t->len = 2;
      ps->p = p + 2;
      t->op = *p == '=' ? '=' : *p == '!' ? '!' : *p == '<' ? 'l' : 'g';
      return;
    }
    if (*p == '<' || *p == '>') {
      t->op = *p;
      return;
    }
    t->kind = T_END;
    fail(ps, t->pos, "%s", *p == '=' ? "'=' is not an operator (did you mean '==')"
                                     : "unexpected '!'");
    return;
  default: break;
  }
  t->kind = T_END;
  char what[2] = {*p, 0};
  fail(ps, t->pos, "unexpected character '%s'", what);
}

static lm_expr *new_expr(parser *ps, lm_expr_kind kind, int32_t pos) {
  lm_expr *e = lm_arena_alloc(ps->arena, sizeof *e);
  if (!e) return nomem(ps);
  e->kind = (uint8_t)kind;
  e->pos = pos;
  e->index = LM_INDEX_NONE;
  e->height = 1;
  return e;
}

/* Set e's height from its operands; NULL (reported) past the limit. */
static lm_expr *grown(parser *ps, lm_expr *e) {
  int32_t h = 0;
  const lm_expr *kids[3] = {e->a, e->b, e->c};
  for (int i = 0; i < 3; i++)
    if (kids[i] && kids[i]->height > h) h = kids[i]->height;
  for (int32_t i = 0; i < e->n_args; i++)
    if (e->args[i]->height > h) h = e->args[i]->height;
  e->height = h + 1;
  if (e->height > LM_EXPR_MAX_HEIGHT) {
    fail(ps, e->pos,
         "formula too deep: more than %d levels of operators (a chain of that many terms); "
         "split it into quantities",
         LM_EXPR_MAX_HEIGHT);
    return NULL;
  }
  return e;
}

/* Binding powers: left power of an infix operator; 0 = not infix. */
static int infix_power(const token *t) {
  if (t->kind == T_NAME && t->len == 2 && memcmp(t->start, "if", 2) == 0) return 1;
  if (t->kind != T_OP) return 0;
  switch (t->op) {
  case '|': return 2;
  case '&': return 3;
  case '=': case '!': case '<': case '>': case 'l': case 'g': return 5;
  case '+': case '-': return 6;
  case '*': case '/': case '%': return 7;
  case 'p': return 9;
  default: return 0; /* 'n' (not) is prefix only */
  }
}

static lm_expr *parse_expr(parser *ps, int min_power);

static int tok_is(const parser *ps, const char *word) {
  size_t n = strlen(word);
  return ps->tok.kind == T_NAME && ps->tok.len == n &&
         memcmp(ps->tok.start, word, n) == 0;
}

/* call_args: '(' [expr (',' expr)*] ')' -- the '(' is current. */
static lm_expr *parse_call(parser *ps, lm_expr *call) {
  size_t cap = 4;
  call->args = lm_arena_alloc(ps->arena, cap * sizeof *call->args);
  if (!call->args) return nomem(ps);
  next(ps);
  if (ps->tok.kind != T_RPAREN) {
    for (;;) {
      lm_expr *arg = parse_expr(ps, 1);
      if (!arg) return NULL;
      if ((size_t)call->n_args == cap) {
        lm_expr **grown = lm_arena_alloc(ps->arena, 2 * cap * sizeof *grown);
        if (!grown) return nomem(ps);
        memcpy(grown, call->args, cap * sizeof *grown);
        call->args = grown;
        cap *= 2;
      }
      call->args[call->n_args++] = arg;
      if (ps->tok.kind == T_COMMA) {
        next(ps);
        continue;
      }
      break;
    }
  }
  if (ps->tok.kind != T_RPAREN) {
    fail(ps, ps->tok.pos, "expected ',' or ')' in the arguments of %s()", call->name);
    return NULL;
  }
  next(ps);
  return grown(ps, call);
}

/* atom: NUMBER | STRING | None | True | False | NAME ['[' index ']']
 *     | NAME '(' args ')' | '$' NAME | '(' expr ')' | prefix-op atom */
static lm_expr *parse_atom(parser *ps) {
  token t = ps->tok;
  lm_expr *e;
  switch (t.kind) {
  case T_NUM:
    e = new_expr(ps, LM_X_NUM, t.pos);
    if (e) e->num = t.num;
    next(ps);
    return e;
  case T_STRING:
    e = new_expr(ps, LM_X_STRING, t.pos);
    if (e && !(e->name = lm_arena_strndup(ps->arena, t.start, t.len))) return NULL;
    next(ps);
    return e;
  case T_VAR:
    e = new_expr(ps, LM_X_VAR, t.pos);
    if (e && !(e->name = lm_arena_strndup(ps->arena, t.start, t.len))) return NULL;
    next(ps);
    return e;
  case T_LPAREN: {
    next(ps);
    e = parse_expr(ps, 1);
    if (!e) return NULL;
    if (ps->tok.kind != T_RPAREN) {
      fail(ps, ps->tok.pos, "expected ')' to close the '(' at column %d",
           (int)t.pos + 1);
      return NULL;
    }
    next(ps);
    return e;
  }
  case T_OP:
    if (t.op == '-' || t.op == '+' || t.op == 'n') {
      next(ps);
      /* Unary minus binds looser than **, tighter than * (Python); not
       * binds looser than comparisons. */
      lm_expr *operand = parse_expr(ps, t.op == 'n' ? 4 : 8);
      if (!operand) return NULL;
      e = new_expr(ps, LM_X_UNARY, t.pos);
      if (!e) return NULL;
      e->op = t.op;
      e->a = operand;
      return grown(ps, e);
    }
    fail(ps, t.pos, "expected a value, found an operator");
    return NULL;
  case T_NAME: {
    if (tok_is(ps, "None")) {
      next(ps);
      return new_expr(ps, LM_X_NONE, t.pos);
    }
    if (tok_is(ps, "True") || tok_is(ps, "False")) {
      e = new_expr(ps, LM_X_NUM, t.pos);
      if (e) e->num = tok_is(ps, "True") ? 1 : 0;
      next(ps);
      return e;
    }
    if (tok_is(ps, "if") || tok_is(ps, "else")) {
      fail(ps, t.pos, "expected a value before '%s'", tok_is(ps, "if") ? "if" : "else");
      return NULL;
    }
    char *name = lm_arena_strndup(ps->arena, t.start, t.len);
    if (!name) return nomem(ps);
    next(ps);
    if (ps->tok.kind == T_LPAREN) {
      e = new_expr(ps, LM_X_CALL, t.pos);
      if (!e) return NULL;
      e->name = name;
      return parse_call(ps, e);
    }
    e = new_expr(ps, LM_X_COL, t.pos);
    if (!e) return NULL;
    e->name = name;
    if (ps->tok.kind == T_LBRACK) {
      next(ps);
      if (ps->tok.kind == T_NUM && ps->tok.num >= 0 && ps->tok.num < 1e6 &&
          ps->tok.num == floor(ps->tok.num)) {
        e->index = (int32_t)ps->tok.num;
      } else if (tok_is(ps, "ch")) {
        e->index = LM_INDEX_CHANNEL;
      } else {
        fail(ps, ps->tok.pos, "expected a channel number or 'ch' inside [ ]");
        return NULL;
      }
      next(ps);
      if (ps->tok.kind != T_RBRACK) {
        fail(ps, ps->tok.pos, "expected ']'");
        return NULL;
      }
      next(ps);
    }
    return e;
  }
  case T_END:
    fail(ps, t.pos, "unexpected end of expression");
    return NULL;
  default:
    fail(ps, t.pos, "expected a value, found '%s'",
         t.kind == T_RPAREN ? ")" : t.kind == T_COMMA ? "," :
         t.kind == T_RBRACK ? "]" : "[");
    return NULL;
  }
}

static lm_expr *parse_expr(parser *ps, int min_power) {
  if (++ps->depth > MAX_DEPTH) {
    fail(ps, ps->tok.pos, "expression nested too deeply");
    return NULL;
  }
  lm_expr *left = parse_atom(ps);
  while (left && ps->status == LM_OK) {
    int power = infix_power(&ps->tok);
    if (power == 0 || power < min_power) break;
    token t = ps->tok;
    next(ps);
    if (power == 1) {
      /* a if cond else b: the condition is an or_test, the else branch a
       * full (right-associative) conditional. */
      lm_expr *cond = parse_expr(ps, 2);
      if (!cond) return NULL;
      if (!tok_is(ps, "else")) {
        fail(ps, ps->tok.pos, "expected 'else' in a conditional expression");
        return NULL;
      }
      next(ps);
      lm_expr *other = parse_expr(ps, 1);
      if (!other) return NULL;
      lm_expr *e = new_expr(ps, LM_X_IF, t.pos);
      if (!e) return NULL;
      e->a = left;
      e->b = cond;
      e->c = other;
      left = grown(ps, e);
      if (!left) return NULL;
      continue;
    }
    /* ** is right-associative and takes a unary operand on its right. */
    int right_power = t.op == 'p' ? 8 : power + 1;
    lm_expr *right = parse_expr(ps, right_power);
    if (!right) return NULL;
    int compare = power == 5;
    if (compare && left->kind == LM_X_COMPARE) {
      fail(ps, t.pos, "chained comparisons are not supported");
      return NULL;
    }
    lm_expr *e = new_expr(ps, compare ? LM_X_COMPARE : LM_X_BINARY, t.pos);
    if (!e) return NULL;
    e->op = t.op;
    e->a = left;
    e->b = right;
    left = grown(ps, e);
    if (!left) return NULL;
  }
  ps->depth--;
  return ps->status == LM_OK ? left : NULL;
}

lm_status lm_expr_parse(const char *text, lm_arena *arena, lm_expr **out,
                        lm_diag *diag) {
  parser ps = {0};
  ps.text = ps.p = text;
  ps.arena = arena;
  ps.diag = diag;
  *out = NULL;
  next(&ps);
  if (ps.status != LM_OK) return ps.status;
  lm_expr *e = parse_expr(&ps, 1);
  if (ps.status != LM_OK) return ps.status;
  if (ps.tok.kind != T_END)
    return fail(&ps, ps.tok.pos, "unexpected text after the end of the expression");
  *out = e;
  return LM_OK;
}

static const char *op_text(const lm_expr *e) {
  switch (e->op) {
  case '+': return "+";
  case '-': return "-";
  case '*': return "*";
  case '/': return "/";
  case '%': return "%";
  case 'p': return "**";
  case '&': return "and";
  case '|': return "or";
  case 'n': return "not ";
  case '=': return "==";
  case '!': return "!=";
  case '<': return "<";
  case '>': return ">";
  case 'l': return "<=";
  case 'g': return ">=";
  default: return "?";
  }
}

void lm_expr_print(const lm_expr *e, lm_buf *out) {
  char number[40];
  switch ((lm_expr_kind)e->kind) {
  case LM_X_NUM:
    if (e->num == floor(e->num) && fabs(e->num) < 1e15)
      lm_buf_printf(out, "%.0f", e->num);
    else
      lm_buf_puts(out, lm_format_double(e->num, number));
    return;
  case LM_X_NONE: lm_buf_puts(out, "None"); return;
  case LM_X_STRING: {
    char quote = strchr(e->name, '\'') ? '"' : '\'';
    lm_buf_printf(out, "%c%s%c", quote, e->name, quote);
    return;
  }
  case LM_X_VAR: lm_buf_printf(out, "$%s", e->name); return;
  case LM_X_COL:
    lm_buf_puts(out, e->name);
    if (e->index == LM_INDEX_CHANNEL) lm_buf_puts(out, "[ch]");
    else if (e->index >= 0) lm_buf_printf(out, "[%d]", (int)e->index);
    return;
  case LM_X_UNARY:
    lm_buf_printf(out, "(%s", op_text(e));
    lm_expr_print(e->a, out);
    lm_buf_putc(out, ')');
    return;
  case LM_X_BINARY:
  case LM_X_COMPARE:
    lm_buf_putc(out, '(');
    lm_expr_print(e->a, out);
    lm_buf_printf(out, " %s ", op_text(e));
    lm_expr_print(e->b, out);
    lm_buf_putc(out, ')');
    return;
  case LM_X_IF:
    lm_buf_putc(out, '(');
    lm_expr_print(e->a, out);
    lm_buf_puts(out, " if ");
    lm_expr_print(e->b, out);
    lm_buf_puts(out, " else ");
    lm_expr_print(e->c, out);
    lm_buf_putc(out, ')');
    return;
  case LM_X_CALL:
    lm_buf_printf(out, "%s(", e->name);
    for (int32_t i = 0; i < e->n_args; i++) {
      if (i) lm_buf_puts(out, ", ");
      lm_expr_print(e->args[i], out);
    }
    lm_buf_putc(out, ')');
    return;
  }
}
